/**
 * The configuration reference (docs/configuration.md), made from the schema and the defaults, so
 * the two cannot drift: `npm run docs` writes it between the markers there, and a test
 * fails when they differ.
 */
import { readFileSync } from 'node:fs';
import { CONFIG_KEYS, ConfigSchema, envName } from './schema.js';

const DEFAULTS = new URL('../../config/default.json', import.meta.url);

export const REFERENCE_START = '<!-- config reference: written by npm run docs -->';
export const REFERENCE_END = '<!-- end of config reference -->';

/**
 * A Markdown list, one item per key: its name, environment variable and default, then
 * its meaning. A list, not a table: the meanings are sentences, and a table of them is
 * too wide to read in a terminal or a diff.
 */
export function configReference(): string {
  const defaults = JSON.parse(readFileSync(DEFAULTS, 'utf8')) as Record<string, unknown>;
  return CONFIG_KEYS.map((key) => {
    const meaning = ConfigSchema.shape[key].description ?? '';
    return `- \`${key}\` (\`${envName(key)}\`, default \`${JSON.stringify(defaults[key])}\`): ${meaning}`;
  }).join('\n');
}

/** The reference with its layout gone, to compare what prettier may have re-spaced. */
export function normaliseReference(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
