/** Said values into words: a catalog's, or English for the journal, operators and programs. */
import { en } from './en.js';
import type { Said, SaidTexts } from './said.js';

export function say(words: { said: SaidTexts }, said: Said): string {
  const render = (inner: Said): string =>
    // Each text takes its own code's Said: the map is keyed by that code.
    (words.said[inner.code] as (said: Said, say: (said: Said) => string) => string)(inner, render);
  return render(said);
}

export const sayInEnglish = (said: Said): string => say(en, said);
