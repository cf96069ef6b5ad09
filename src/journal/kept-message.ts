/**
 * The English a journal keeps beside a message it holds as a value (a row's or a line's
 * `said`): what journals read by an older payouts, `--json` and logs show. Made here, the
 * same for every store, so that no store writes a sentence of its own.
 */
import type { Said } from '../messages/said.js';
import { sayInEnglish } from '../messages/say.js';

export const keptMessage = (said: Said): string => sayInEnglish(said);
