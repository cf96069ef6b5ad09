/**
 * The fields a payout row gives, the headings people write for them, and the documents
 * that name a recipient.
 */
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

/** Aliases as people write them; matched after folding (see foldHeading). */
export const FIELD_ALIASES: Readonly<Record<PayoutField, readonly string[]>> = {
  // Only explicit headings: `id` and `ref` name employees and suppliers in accounting,
  // which repeat every month; `referência` and `pedido` are a payment's reference.
  orderId: ['orderId', 'order id', 'id do pagamento'],
  // Accounts payable names the payee by its supplier (`Fornecedor`, `Razão Social`).
  name: [
    'name',
    'nome',
    'favorecido',
    'beneficiário',
    'nome completo',
    'recebedor',
    'fornecedor',
    'razão social',
  ],
  email: ['email', 'e-mail'],
  phone: ['phone', 'telefone', 'celular', 'fone'],
  cpfCnpj: ['cpfCnpj', 'CPF/CNPJ', 'documento', 'CPF', 'CNPJ', 'CNPJ/CPF'],
  pixKeyType: ['pixKeyType', 'tipo chave', 'tipo de chave', 'tipo', 'tipo chave pix', 'key type'],
  pixKey: ['pixKey', 'chave', 'chave pix', 'key'],
  valueCents: ['value', 'valor centavos', 'value cents', 'centavos', 'cents'],
  amountReais: ['amount', 'valor', 'valor R$', 'valor em R$', 'valor reais'],
  // What tells two payments of one payee apart: an invoice, an order, a competência.
  reference: [
    'reference',
    'nota fiscal',
    'NF',
    'NF-e',
    'número da nota',
    'número da NF',
    'número do documento',
    'nº do documento',
    'documento fiscal',
    'fatura',
    'referência',
    'pedido',
    'número do pedido',
    'competência',
    'mês de competência',
  ],
};

/** What each column gives, in English (the catalogs say it in each language). */
export const FIELD_LABELS: Readonly<Record<PayoutField, string>> = {
  orderId: 'order reference',
  name: "recipient's name",
  email: "recipient's e-mail",
  phone: "recipient's phone",
  cpfCnpj: "recipient's CPF/CNPJ",
  pixKeyType: 'Pix key type',
  pixKey: 'Pix key',
  valueCents: 'amount in cents',
  amountReais: 'amount in reais',
  reference: "payment's reference",
};
