/**
 * The configuration reference of the README, made from the schema and the defaults, so
 * the two cannot drift: `npm run docs` writes it between the README's markers, and a test
 * fails when they differ.
 */
import { readFileSync } from 'node:fs';
import { CONFIG_KEYS, ConfigSchema, envName } from './schema.js';

const DEFAULTS = new URL('../../config/default.json', import.meta.url);

export const REFERENCE_START = '<!-- config reference: written by npm run docs -->';
export const REFERENCE_END = '<!-- end of config reference -->';

/** The Markdown table: key, environment variable, default, meaning. */
export function configReference(): string {
  const defaults = JSON.parse(readFileSync(DEFAULTS, 'utf8')) as Record<string, unknown>;
  const rows = CONFIG_KEYS.map((key) => {
    const meaning = (ConfigSchema.shape[key].description ?? '').replaceAll('|', '\\|');
    return `| \`${key}\` | \`${envName(key)}\` | \`${JSON.stringify(defaults[key])}\` | ${meaning} |`;
  });
  return [
    '| key | environment variable | default | meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** A Markdown table with its cells' padding gone: the README's is aligned by prettier. */
export function normaliseTable(table: string): string {
  return table
    .trim()
    .split('\n')
    .map((line) =>
      /^\|[\s:-]+(\|[\s:-]+)+\|$/.test(line.trim())
        ? '|---|'
        : line
            .trim()
            .replace(/\s*\|\s*/g, '|')
            .replace(/ {2,}/g, ' '),
    )
    .join('\n');
}
