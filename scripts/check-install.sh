#!/usr/bin/env bash
# Packs this checkout, installs the tarball globally into a temporary prefix as a server
# would (from the registry or npm's cache), and fails when any installed package is not
# the version npm-shrinkwrap.json locks: a server gets what CI tested.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
tarball=$(npm pack --silent --pack-destination "$prefix")
npm install -g --no-audit --no-fund --prefix "$prefix" "$prefix/$tarball"
node - "$prefix/lib/node_modules/payouts" <<'JS'
const { existsSync, readFileSync } = require('node:fs');
const installed = process.argv[2];
const locked = JSON.parse(readFileSync('npm-shrinkwrap.json', 'utf8')).packages;
const wrong = Object.entries(locked)
  .filter(([path, entry]) => path !== '' && !entry.dev && !entry.optional)
  .map(([path, entry]) => {
    const manifest = `${installed}/${path}/package.json`;
    return [path, entry.version, existsSync(manifest) ? require(manifest).version : 'nothing'];
  })
  .filter(([, want, got]) => want !== got);
for (const [path, want, got] of wrong) console.error(`${path}: locked ${want}, installed ${got}`);
console.log(wrong.length === 0 ? 'every installed package is the locked version' : `${wrong.length} differ`);
process.exit(wrong.length === 0 ? 0 : 1);
JS
