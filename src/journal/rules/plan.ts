/**
 * What a rule on who is paid decides, as values a store applies: moves of rows, each
 * checked against the transition table and audited by the store, with its reason.
 */
import type { Said } from '../../messages/said.js';
import type { HoldReason, RowState } from '../states.js';

/** Fields a move by the rules on who is paid sets (never an answer of the gateway). */
export interface RuleFields {
  holdReason?: HoldReason | null;
  coveredBy?: string | null;
  message?: string | null;
  /** The message as a value, where a rule says why (see migration 16). */
  said?: Said | null;
  supersededBy?: number | null;
}

/** Why a rule moves a row, as a value: the audit keeps it (see auditReasonOf). */
export type MoveReason =
  /** Held, or held again, for what `said` says. */
  | { code: 'held'; said: Said }
  /** Covered by the payout `said` names. */
  | { code: 'covered'; said: Said }
  /** Its orderId's place taken by the copy's row `by`. */
  | { code: 'takenOver'; by: string }
  /** A copy's row taking over the earlier row `orderId`, never sent. */
  | { code: 'takesOver'; orderId: string }
  /** A copy's row, sent in place of one that needed a person. */
  | { code: 'replaces' }
  /** A row of the corrected batch the copy `file` changed or left out. */
  | { code: 'leftOut'; file: string }
  /** A row a copy had closed, given back as that copy is turned down. */
  | { code: 'givenBack' }
  /** A copy held as a repeat of a failed payout, covered by it sent again as `retryId`. */
  | { code: 'coveredByRetry'; retryId: string }
  /** Held while a later file of its name waits for a person, as `why` says. */
  | { code: 'frozen' }
  /** Let go as that file is answered, as `why` says. */
  | { code: 'thawed' };

/** A row moved by a rule: from the state the store read, with the fields the rule sets. */
export interface PlannedMove {
  orderId: string;
  from: RowState;
  to: RowState;
  fields: RuleFields;
  reason: MoveReason;
}

/** A move's reason as the audit keeps it; `why` is what the caller did (a copy linked). */
export function auditReasonOf(reason: MoveReason, why: Said): Said {
  switch (reason.code) {
    case 'held':
      return reason.said;
    case 'covered':
      return { code: 'auditCovered', why, said: reason.said };
    case 'takenOver':
      return { code: 'auditTakenOver', why, by: reason.by };
    case 'takesOver':
      return { code: 'auditTakesOver', why, orderId: reason.orderId };
    case 'replaces':
      return { code: 'auditReplaces', why };
    case 'leftOut':
      return { code: 'auditLeftOut', why, file: reason.file };
    case 'givenBack':
      return { code: 'auditGivenBack', why };
    case 'coveredByRetry':
      return { code: 'auditCoveredByRetry', retryId: reason.retryId, why };
    case 'frozen':
    case 'thawed':
      return why;
  }
}
