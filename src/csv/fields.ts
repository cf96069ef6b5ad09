/** The fields a payout row gives, and the documents that name a recipient. */
export const PAYOUT_FIELDS = [
  'orderId',
  'name',
  'email',
  'phone',
  'cpfCnpj',
  'pixKeyType',
  'pixKey',
  'valueCents',
  'amountReais',
  'reference',
] as const;
export type PayoutField = (typeof PAYOUT_FIELDS)[number];

export type DocumentKind = 'CPF' | 'CNPJ';
