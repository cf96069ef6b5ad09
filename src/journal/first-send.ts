/**
 * Which of a batch's queued payouts are looked up at the gateway before its first send:
 * a journal behind the gateway (a home folder restored from a backup, or copied) forgot
 * a batch whole or from some row on, so its first, middle and last rows tell, at three
 * lookups a batch rather than one a payout.
 */
import { FORGOTTEN_BATCHES, orderIdsAsBatches } from '../csv/order-id.js';
import { PIX_KEY_TYPES, type CashOutRequest } from '../gateway/contract.js';

/** The positions (0: the first queued row, in line order) to look up among `queued` rows. */
export function sampleLines(queued: number): number[] {
  if (queued <= 0) return [];
  return [...new Set([0, Math.floor((queued - 1) / 2), queued - 1])];
}

/**
 * The orderIds a row of a batch (a number of its name) would have had as the next
 * batches of that name, past `highest`, the highest number this journal has: a home
 * restored from a backup may have sent it under one of them. None for an orderId a file
 * gave, or a batch with no name.
 */
export function forgottenOrderIdsOf(
  request: CashOutRequest,
  batch: { nameKey: string | null; nameNumber: number | null; orderIdHome: string | null },
  highest: number,
): string[] {
  if (!batch.nameKey || batch.nameNumber === null) return [];
  return orderIdsAsBatches(
    request.orderId,
    { stem: batch.nameKey, batchNumber: batch.nameNumber, home: batch.orderIdHome },
    {
      pixKeyType: PIX_KEY_TYPES[request.pixKeyType] ?? '',
      pixKey: request.pixKey,
      cpfCnpj: request.cpfCnpj,
      valueCents: request.value,
      name: request.person.name,
    },
    Array.from({ length: FORGOTTEN_BATCHES }, (_, i) => highest + 1 + i),
  );
}
