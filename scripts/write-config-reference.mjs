// npm run docs: writes the configuration reference into docs/configuration.md, between its markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { REFERENCE_END, REFERENCE_START, configReference } from '../dist/config/reference.js';

const path = new URL('../docs/configuration.md', import.meta.url);
const readme = readFileSync(path, 'utf8');
const start = readme.indexOf(REFERENCE_START);
const end = readme.indexOf(REFERENCE_END);
if (start < 0 || end < start)
  throw new Error('docs/configuration.md has no configuration reference markers');
writeFileSync(
  path,
  `${readme.slice(0, start + REFERENCE_START.length)}\n\n${configReference()}\n\n${readme.slice(end)}`,
);
