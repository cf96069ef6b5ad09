/** Português do Brasil, para a contabilidade: as palavras dos resultados e dos resumos. */
import type { Catalog } from './catalog.js';

const many = (n: number, one: string, more: string) => `${n} ${n === 1 ? one : more}`;

export const ptBR: Catalog = {
  heading: {
    sandbox: 'sandbox',
    line: 'Linha',
    orderId: 'ID do pagamento',
    name: 'Nome',
    pixKeyType: 'Tipo de chave',
    pixKey: 'Chave Pix',
    cpfCnpj: 'CPF/CNPJ',
    value: 'Valor',
    status: 'Situação',
    transactionId: 'ID da transação',
    endToEndId: 'EndToEndId',
    fee: 'Tarifa',
    net: 'Líquido',
    createdAt: 'Criado em',
    processedAt: 'Processado em',
    message: 'Mensagem',
    amountAsWritten: 'Valor como escrito',
    column: 'Coluna',
  },
  state: {
    valid: 'válida',
    invalid: 'inválida',
    skipped: 'ignorada',
    replay: 'repetida',
    queued: 'na fila',
    held: 'retida',
    sending: 'enviando',
    unknown: 'sem resposta',
    pending: 'pendente',
    paid: 'pago',
    failed: 'falhou',
    canceled: 'cancelado',
    refunded: 'devolvido',
    rejected: 'recusado',
    covered: 'já pago',
    superseded: 'substituída',
    conflict: 'conflito',
    retried: 'reenviado',
  },
  outcome: ({ state }) =>
    ({
      archived: 'todas as linhas concluídas: arquivado em archive/',
      final: 'todas as linhas concluídas',
      taken: 'recebido',
      resumed: 'retomado',
      held: 'retido: nada enviado',
      retried: 'reenviado de propósito (payouts retry)',
      'awaiting-approval': 'aguardando aprovação em awaiting-approval/',
      'cut-short': 'leitura interrompida',
      unusable: 'não pode ser usado',
      waiting: 'deixado na entrada para a próxima execução',
      skipped: 'ignorado: não é um arquivo de pagamentos',
    })[state],
  sandboxMoved: 'SANDBOX: nenhum dinheiro real foi movido',
  sandboxRun:
    'SANDBOX: nenhum dinheiro real foi movido: estes pagamentos foram para o sandbox embutido',
  validated: ({ file, rows, valid, invalid, skipped, total }) =>
    `${file}: ${many(rows, 'linha', 'linhas')}: ${many(valid, 'válida', 'válidas')}, ${many(invalid, 'inválida', 'inválidas')}, ${many(skipped, 'ignorada', 'ignoradas')}; total das linhas válidas ${total}`,
  rowsIn: ({ count, state, amount }) =>
    amount === null ? `${state}: ${count}` : `${state}: ${count} (${amount})`,
  noRows: 'nenhuma linha',
  fileSummary: ({ file, outcome, totals, total }) =>
    `${file}: ${outcome}; ${totals}; total das linhas válidas ${total}`,
  resultAt: ({ path }) => `resultado: ${path}`,
};
