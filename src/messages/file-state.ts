/**
 * What became of a file in a pass, for programs (`run --json`); `outcome` says it for
 * people. `archived`: every row final, the file in archive/; `final`: every row final, the
 * file left where it is (sent again by a retry, or it could not be moved); `taken`:
 * journaled now, some rows not final yet; `resumed`: taken by an earlier run, worked on
 * again; `held`: nothing of it sent (a rule, a control total, the balance); `retried`:
 * sent again on purpose; `waiting-retry`: rows held for `payouts retry` (a payout they
 * repeat did not pay), its file perhaps archived already; `awaiting-approval`; `replaced`: waiting for approval until its corrected copy took over or closed every row it had left; `cut-short`: its reading was cut short and
 * the file is gone; `unusable`: it cannot be read or used (in rejected/ when it could be
 * moved there); `waiting`: left in the inbox, or in processing/ half read, for a later run; `skipped`: not a payout
 * file (hidden, temporary, a lock).
 */
export type FileState =
  | 'archived'
  | 'final'
  | 'taken'
  | 'resumed'
  | 'held'
  | 'retried'
  | 'waiting-retry'
  | 'awaiting-approval'
  | 'cut-short'
  | 'replaced'
  | 'unusable'
  | 'waiting'
  | 'skipped';
