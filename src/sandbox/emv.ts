/**
 * Pix payment codes ("BR Code"): EMV merchant-presented QR payloads, a list of
 * ID-length-value fields closed by a CRC16/CCITT-FALSE checksum.
 */

/** CRC16/CCITT-FALSE (poly 0x1021, init 0xFFFF), as four upper-case hex digits. */
export function crc16(payload: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(payload, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function field(id: string, value: string): string {
  if (value.length > 99) throw new RangeError(`EMV field ${id} longer than 99 characters`);
  return id + String(value.length).padStart(2, '0') + value;
}

/** EMV fields allow a narrow alphabet: plain ASCII, no accents, bounded length. */
function plain(text: string, maxLength: number): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9 .\-]/g, '')
    .replace(/\s+/g, ' ')
    .slice(0, maxLength)
    .trim();
}

export interface PaymentCodeInput {
  /** The receiving Pix key. */
  pixKey: string;
  amountCents: number;
  merchantName: string;
  merchantCity: string;
  /** Reference of this charge; letters and digits, at most 25. */
  txid: string;
}

export function buildPaymentCode(input: PaymentCodeInput): string {
  const reais = `${Math.trunc(input.amountCents / 100)}.${String(input.amountCents % 100).padStart(2, '0')}`;
  const body =
    field('00', '01') +
    field('01', '12') +
    field('26', field('00', 'br.gov.bcb.pix') + field('01', input.pixKey)) +
    field('52', '0000') +
    field('53', '986') +
    field('54', reais) +
    field('58', 'BR') +
    field('59', plain(input.merchantName, 25) || 'PAYOUTS SANDBOX') +
    field('60', plain(input.merchantCity, 15) || 'SAO PAULO') +
    field('62', field('05', input.txid.replace(/[^A-Za-z0-9]/g, '').slice(0, 25) || '***')) +
    '6304';
  return body + crc16(body);
}
