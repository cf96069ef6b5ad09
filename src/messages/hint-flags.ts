/**
 * The flags of a command a message prints, in its `hintFlags`: the command's own
 * (` --batch 4`) first, then the global flags that reach a home (` --settings-file "…"`,
 * see the CLI's hintFlagsOf). The journal keeps messages whose commands carry no global
 * flags, since a journal's move knows no run's; they are added when a person is shown one.
 */
import type { Said } from './said.js';

/** A command's own flags, the only ones a printed command takes before the global ones. */
const OWN = /^ --batch \d+/;

/** The global flags alone: for a command of another verb in the same sentence (`payouts get`). */
export const globalFlags = (hintFlags: string): string => hintFlags.replace(OWN, '');

/**
 * A message as shown to a person who ran a command given `hintFlags`: each command it
 * prints keeps its own flags and takes these, in place of any the message was made with
 * (journals written before kept those of the run that made a row's message).
 */
export function withHintFlags(said: Said, hintFlags: string): Said {
  return JSON.parse(JSON.stringify(said), (key, value: unknown) =>
    key === 'hintFlags' && typeof value === 'string'
      ? `${OWN.exec(value)?.[0] ?? ''}${hintFlags}`
      : value,
  ) as Said;
}
