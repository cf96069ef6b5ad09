/**
 * The one place where the gateway's status codes ("0".."4", on cash-out answers) and
 * status words ("paid", on retrieved transactions) become our status.
 */

export const PAYOUT_STATUSES = ['pending', 'paid', 'failed', 'canceled', 'refunded'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** A status we could not map: kept verbatim, never treated as final. */
export const UNRECOGNISED = 'unrecognised' as const;
export type GatewayStatus = PayoutStatus | typeof UNRECOGNISED;

const BY_CODE: Readonly<Record<string, PayoutStatus>> = {
  '0': 'pending',
  '1': 'paid',
  '2': 'failed',
  '3': 'canceled',
  '4': 'refunded',
};

// The interface shows only `paid`; the other words are the names of the code table
// (section 3) and their usual spellings.
const BY_WORD: Readonly<Record<string, PayoutStatus>> = {
  pending: 'pending',
  paid: 'paid',
  failed: 'failed',
  canceled: 'canceled',
  cancelled: 'canceled',
  refund: 'refunded',
  refunded: 'refunded',
};

/** Maps a status code or word, as the gateway wrote it, to our status. */
export function mapStatus(raw: string): GatewayStatus {
  const key = raw.trim().toLowerCase();
  return BY_CODE[key] ?? BY_WORD[key] ?? UNRECOGNISED;
}

/** A final status never changes again, except paid -> refunded (a Pix return). */
export function isFinalStatus(status: GatewayStatus): boolean {
  return status === 'paid' || status === 'failed' || status === 'canceled' || status === 'refunded';
}

/** The code the interface uses on cash-out answers (section 3). */
export function statusCode(status: PayoutStatus): string {
  return String(PAYOUT_STATUSES.indexOf(status));
}

/** The word a retrieved transaction carries. */
export function statusWord(status: PayoutStatus): string {
  return status === 'refunded' ? 'refund' : status;
}
