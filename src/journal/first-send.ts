/**
 * Which of a batch's queued payouts are looked up at the gateway before its first send:
 * a journal behind the gateway (a home folder restored from a backup, or copied) forgot
 * a batch whole or from some row on, so its first, middle and last rows tell, at three
 * lookups a batch rather than one a payout.
 */

/** The positions (0: the first queued row, in line order) to look up among `queued` rows. */
export function sampleLines(queued: number): number[] {
  if (queued <= 0) return [];
  return [...new Set([0, Math.floor((queued - 1) / 2), queued - 1])];
}
