/**
 * Every relative link of the project's docs reaches a file, and its `#anchor` a heading
 * of that file, as GitHub names them: a link from docs/x.md is relative to docs/.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The page's text outside fenced code blocks, where `[a](b)` is code, not a link. */
function prose(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8').replace(/^```[^]*?^```/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const headings = [...prose(page).matchAll(/^#{1,6} +(.+?) *$/gm)].map((match) =>
    anchorOf(match[1] as string),
  );
  const seen = new Map<string, number>();
  return new Set(
    headings.map((anchor) => {
      const times = seen.get(anchor) ?? 0;
      seen.set(anchor, times + 1);
      return times === 0 ? anchor : `${anchor}-${times}`;
    }),
  );
}

/** `docs/x.md: y.md#z` for each relative link that reaches no file or no heading. */
function deadLinks(page: string): string[] {
  const dead: string[] = [];
  for (const match of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] as string;
    if (/^[a-z]+:/i.test(target)) continue;
    const [path = '', anchor] = target.split('#');
    const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
    const reached = existsSync(file)
      ? anchor === undefined || !file.endsWith('.md') || anchorsOf(relative(ROOT, file)).has(anchor)
      : false;
    if (!reached) dead.push(`${page}: ${target}`);
  }
  return dead;
}

describe('the docs', () => {
  it('name headings as GitHub does', () => {
    expect(anchorOf('Files in the inbox, and the daemon')).toBe(
      'files-in-the-inbox-and-the-daemon',
    );
    expect(anchorOf('`payouts run`: one pass')).toBe('payouts-run-one-pass');
    expect(anchorOf('Situações de cada linha')).toBe('situações-de-cada-linha');
  });

  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    expect(deadLinks(page)).toEqual([]);
  });
});
