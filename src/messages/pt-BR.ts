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
  readAs: ({ encoding, delimiter, orderIdColumn }) =>
    `lido como ${encoding}, delimitador ${JSON.stringify(delimiter)}, ${
      orderIdColumn === null
        ? 'IDs de pagamento criados a partir de cada linha (o arquivo não tem coluna de ID)'
        : `IDs de pagamento da coluna "${orderIdColumn}"`
    }`,
  rowsIn: ({ count, state, amount }) =>
    amount === null ? `${state}: ${count}` : `${state}: ${count} (${amount})`,
  noRows: 'nenhuma linha',
  fileSummary: ({ file, outcome, totals, total }) =>
    `${file}: ${outcome}; ${totals}; total das linhas válidas ${total}`,
  resultAt: ({ path }) => `resultado: ${path}`,
  atLineColumn: ({ line, column, message }) => `linha ${line}, coluna ${column}: ${message}`,
  invalidRowsTitle:
    'Linhas inválidas (corrija-as e envie o arquivo de novo; as linhas válidas não esperam por elas):',
  warningsTitle: 'Avisos (a linha é válida; confira se foi lida como queria):',
  andMore: ({ count, report }) =>
    `… e mais ${count}${report ? '' : ' (todas com --report ARQUIVO)'}`,
  fileHeld: ({ message }) => `Retido, nada deste arquivo será pago: ${message}`,
  wouldHold: ({ note }) => `Uma execução o reteria para uma pessoa decidir: ${note}`,
  heldByRulesTitle: ({ journal }) =>
    `Retidas para uma pessoa decidir, pelas regras de quem é pago (contra o diário ${journal}):`,
  heldRow: ({ line, rule, message }) => `linha ${line} (${rule}): ${message}`,
  andMoreHeld: ({ count }) => `… e mais ${count} (payouts run --dry-run --json lista todas)`,
  skipped: ({ lines }) =>
    `Ignoradas: ${lines.map(({ line, reason }) => `linha ${line} (${reason})`).join(', ')}`,
};
