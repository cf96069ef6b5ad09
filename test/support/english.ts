/**
 * What the reading of a file says, in English, for assertions on its words: every Said
 * inside a value (a reading, a row's outcome, a report) is replaced by its English text.
 */
import { en } from '../../src/messages/en.js';
import type { Said } from '../../src/messages/said.js';
import { sayInEnglish } from '../../src/messages/say.js';

export type English<T> = T extends Said
  ? string
  : T extends readonly (infer U)[]
    ? English<U>[]
    : T extends object
      ? { [K in keyof T]: English<T[K]> }
      : T;

const isSaid = (value: object): value is Said =>
  'code' in value && typeof value.code === 'string' && Object.hasOwn(en.said, value.code);

export function inEnglish<T>(value: T): English<T> {
  if (Array.isArray(value)) return value.map((item: unknown) => inEnglish(item)) as English<T>;
  if (value === null || typeof value !== 'object') return value as English<T>;
  if (isSaid(value)) return sayInEnglish(value) as English<T>;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, inEnglish(inner)]),
  ) as English<T>;
}
