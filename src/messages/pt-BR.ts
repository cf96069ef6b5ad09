/** Português do Brasil, para a contabilidade: as palavras dos resultados e dos resumos. */
import { formatCents } from './money.js';
import { globalFlags } from './hint-flags.js';
import { FIELD_ALIASES, type PayoutField } from './fields.js';
import type { Catalog, HelpTexts, StatusWord } from './catalog.js';
import type { BytePosition, ControlSource, Payees, Repeating, SaidTexts } from './said.js';

const many = (n: number, one: string, more: string) => `${n} ${n === 1 ? one : more}`;
/** Um tamanho como se lê: 7,5 MB, 812,0 kB, 96 bytes. */
const bytes = (n: number) =>
  n >= 1e6
    ? `${(n / 1e6).toFixed(1).replace('.', ',')} MB`
    : n >= 1e3
      ? `${(n / 1e3).toFixed(1).replace('.', ',')} kB`
      : `${n} bytes`;

const SALVAR_COMO_CSV =
  'salve-o de novo no Excel em Arquivo > Salvar como > "CSV UTF-8 (delimitado por vírgulas)" (ou "CSV (separado por vírgulas)")';
const TIPOS_DE_CHAVE = '0-4 ou CPF, CNPJ, EMAIL, TELEFONE (CELULAR), RANDOM_KEY (EVP, aleatória)';
const MANTER_ZEROS = 'formate a coluna como texto para manter os zeros à esquerda';

const CAMPOS: Readonly<Record<PayoutField, string>> = {
  orderId: 'ID do pagamento',
  name: 'nome do favorecido',
  email: 'e-mail do favorecido',
  phone: 'telefone do favorecido',
  cpfCnpj: 'CPF/CNPJ do favorecido',
  pixKeyType: 'tipo de chave Pix',
  pixKey: 'chave Pix',
  valueCents: 'valor em centavos',
  amountReais: 'valor em reais',
  reference: 'referência do pagamento',
};

const aceitos = (field: PayoutField) =>
  `${CAMPOS[field]} (títulos aceitos: ${FIELD_ALIASES[field].join(', ')})`;
const posicao = ({ line, offset, byte }: BytePosition) =>
  byte === undefined
    ? `linha ${line}, na posição ${offset}`
    : `linha ${line}, byte 0x${byte} na posição ${offset}`;
const origem = (from: ControlSource) =>
  'totalLine' in from ? `a linha de total (linha ${from.totalLine})` : from.sidecar;
const linhasESoma = ({ rows, cents }: { rows?: number; cents?: number }) =>
  [
    rows === undefined ? '' : many(rows, 'linha', 'linhas'),
    cents === undefined ? '' : formatCents(cents),
  ]
    .filter(Boolean)
    .join(' e ');

/** `12,3`: a rate with one decimal, as Brazil writes it. */
const UMA_CASA = new Intl.NumberFormat('pt-BR', {
  minimumFractionDigits: 1,
  maximumFractionDigits: 1,
});

const ESTADOS: Readonly<Record<StatusWord, string>> = {
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
};

/** `27/11/2026 09:00:00`, um instante no fuso horário da pasta. */
const instante = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat('pt-BR', { timeZone, dateStyle: 'short', timeStyle: 'medium' })
    .format(ms)
    .replace(', ', ' ');

/** `09:00 de 27/11/2026`, no fuso horário da pasta. */
const horaEDia = (ms: number, timeZone: string) =>
  `${new Intl.DateTimeFormat('pt-BR', { timeZone, timeStyle: 'short' }).format(ms)} de ${new Intl.DateTimeFormat('pt-BR', { timeZone, dateStyle: 'short' }).format(ms)}`;

const DIA_MS = 86_400_000;

/** ` (a linha 2 como a linha 3 dele, ...)`: quais linhas de uma cópia repetem quais. */
const quaisRepetem = (
  repeticoes: readonly { line: number; earlierLine: number }[],
  mais: number,
) =>
  repeticoes.length === 0
    ? ''
    : ` (${repeticoes.map((par) => `a linha ${par.line} como a linha ${par.earlierLine} dele`).join(', ')}${mais > 0 ? ` e mais ${mais === 1 ? '1 linha' : `${mais} linhas`}` : ''})`;

/** O dia em que um pagamento entrou no diário, como a contabilidade escreve datas. */
const dia = (ms: number | null) =>
  ms === null
    ? 'numa execução anterior'
    : `em ${new Date(ms).toISOString().slice(0, 10).split('-').reverse().join('/')}`;
/** `em 05/10/2026 às 14:30 (UTC)`, quando um pagamento entrou no diário. */
const momento = (ms: number | null) =>
  ms === null
    ? 'numa execução anterior'
    : `${dia(ms)} às ${new Date(ms).toISOString().slice(11, 16)} (UTC)`;
/** O que executar enquanto a cópia que substituiu um arquivo aguarda aprovação. */
const copiaAguarda = (next: { file: string; hintFlags: string } | null) =>
  next ? `; a cópia aguarda aprovação: payouts approve "${next.file}"${next.hintFlags}` : '';
/** `R$ 5.500,00: Ana Souza R$ 3.000,00, Bruno Lima R$ 2.500,00`. */
const pagos = ({ rows, cents, first }: Payees) =>
  `${formatCents(cents)}: ${first
    .map((payee) => `${payee.name} ${formatCents(payee.cents)}`)
    .join(', ')}${rows > first.length ? ', …' : ''}`;
const transacao = (id: number | null) => (id === null ? '' : `, transação ${id}`);
const pagamentos = (n: number) => many(n, 'pagamento', 'pagamentos');

/** `linha 2 (Ana Souza, R$ 3.500,00) repete folha.csv linha 2 (nov-02, pago)`. */
const repeticao = ({ line, name, cents, repeats }: Repeating) =>
  `linha ${line} (${name}, ${formatCents(cents)}) repete ${
    repeats
      ? `${repeats.file} linha ${repeats.line} (${repeats.orderId}, ${ESTADOS[repeats.state]})`
      : 'um pagamento anterior'
  }`;
/** O que houve com um pagamento que cobria uma linha e a deixa sem pagar. */
const DESFEITO: Partial<Record<StatusWord, string>> = {
  refunded: 'foi devolvido',
  failed: 'falhou',
  canceled: 'foi cancelado',
  rejected: 'foi recusado',
};

const said: SaidTexts = {
  empty: () => 'está vazio',
  rowSpansLines: ({ line, lastLine }) =>
    `esta linha ocupa as linhas ${line}–${lastLine}: se a quebra de linha na célula é proposital, deixe o texto numa linha só; se não, falta uma aspa (") e linhas podem ter sido engolidas`,
  moreValuesThanColumns: ({ values, columns }) =>
    `esta linha tem ${values} valores, mas o cabeçalho tem ${columns} colunas: um valor que contém o delimitador precisa estar entre aspas`,
  valueUnderBlankHeading: () =>
    'tem um valor sob um título em branco: um valor que contém o delimitador precisa estar entre aspas',
  controlCharacter: () =>
    'tem um caractere de controle invisível (NUL ou parecido): digite a célula de novo',
  alsoWrong: ({ first, columns }, say) => `${say(first)} (também: ${columns.join(', ')})`,
  moreMistakes: ({ first, more }, say) =>
    [
      say(first),
      ...more.map(({ column, message }) =>
        column === null ? say(message) : `${column}: ${say(message)}`,
      ),
    ].join(' | '),
  totalLine: () => 'uma linha de total, não um pagamento',
  identicalRows: ({ line }) =>
    `idêntica à linha ${line} (mesmo nome, documento, chave Pix e valor): retida até uma pessoa confirmar que as duas são devidas; a execução que receber o arquivo mostra o comando para isso`,
  referenceEmpty: () =>
    'está vazia: esta linha é comparada como num arquivo sem referência (o mesmo documento e valor de um pagamento dentro de duplicateWindow é retido)',
  orderIdEmpty: () => 'está vazio: cada linha precisa do seu próprio ID de pagamento',
  orderIdUnusable: ({ orderId }) =>
    `"${orderId}" não serve como ID de pagamento: até 64 letras, dígitos, espaços e . _ : # -, começando por letra ou dígito`,
  orderIdRepeated: ({ orderId, line }) =>
    `"${orderId}" já foi usado na linha ${line}: cada linha precisa do seu próprio ID de pagamento`,
  orderIdLikeRowNumber: ({ orderId }) =>
    `o ID de pagamento "${orderId}" parece um número de linha: os IDs precisam ser únicos entre todos os arquivos, então o "${orderId}" do mês que vem seria recusado como conflito`,
  nameEmpty: () => 'está vazio: o nome do favorecido é obrigatório',
  nameNotAName: ({ name }) =>
    `"${name}" não parece um nome: precisa começar por letra ou dígito (uma célula que começa com = + - @ pode ser uma fórmula da planilha)`,
  nameTooLong: ({ length, max }) => `tem ${length} caracteres; no máximo ${max}`,
  noContact: ({ contact, noColumn }) => {
    const [palavra, chave, setting] =
      contact === 'email'
        ? ['e-mail', 'um e-mail', 'recipientEmail']
        : ['telefone', 'um telefone', 'recipientPhone'];
    return noColumn
      ? `o arquivo não tem ${palavra} (o gateway exige um, e a chave Pix não é ${chave}); a empresa pode definir um ${palavra} padrão: ${setting}`
      : `está vazio: o ${palavra} do favorecido é obrigatório (a chave Pix não é ${chave} e ${setting} não está configurado)`;
  },
  emailInvalid: ({ email }) => `"${email}" não é um endereço de e-mail (como nome@exemplo.com.br)`,
  phoneInvalid: ({ phone }) =>
    `"${phone}" não é um telefone com DDD (como (11) 98765-4321 ou +55 11 98765-4321)`,
  amountSplit: ({ written, plain }) =>
    `"${written}" parece cortado pelo delimitador vírgula: ponha o valor entre aspas, ou escreva-o como ${plain}`,
  amountOverLimit: ({ cents, limitCents }) =>
    `${formatCents(cents)} passa do limite de ${formatCents(limitCents)} por pagamento (maxPayoutCents)`,
  amountZero: ({ shown }) => `${shown} é zero: um pagamento precisa ser maior que zero`,
  amountTooLarge: ({ shown }) => `${shown} é grande demais`,
  amountScientific: ({ shown }) =>
    `"${shown}" foi convertido em notação científica pela planilha: formate a coluna como texto ou número com 2 casas decimais`,
  amountNegative: ({ shown, cents, parentheses }) =>
    `${shown} é negativo (R$ -${formatCents(cents).slice(3)})${parentheses ? ': na contabilidade, parênteses marcam um valor negativo' : ''}; um pagamento precisa ser maior que zero`,
  notAnAmount: ({ shown, wholeReaisMissing }) =>
    `"${shown}" não é um valor em reais (${wholeReaisMissing === undefined ? 'escreva como 1234,56 ou R$ 1.234,56' : `escreva também os reais, como 0${wholeReaisMissing}`})`,
  notInReais: ({ shown }) =>
    `"${shown}" não está em reais: os pagamentos são em reais; escreva o valor em R$, como 1.234,56`,
  thousandsOrDecimals: ({ shown, digits }) =>
    `${shown} pode ser milhar ou decimais: escreva ${digits} para reais inteiros, ou use duas casas decimais (1.234,00)`,
  tooManyDecimals: ({ shown }) =>
    `${shown} tem mais de duas casas decimais: valores são reais e centavos, como 1.234,56`,
  mixedThousands: ({ shown, separators }) =>
    `${shown} mistura separadores de milhar (${separators.map((s) => (s === ' ' ? 'espaço' : `"${s}"`)).join(' e ')}): use um só, como 1.234.567,89`,
  misplacedThousands: ({ shown }) =>
    `${shown} tem separadores de milhar fora do lugar: eles ficam entre grupos de três dígitos, como 1.234.567,89`,
  misplacedSpace: ({ shown }) =>
    `"${shown}" tem um espaço que não separa milhares: um espaço só pode ficar entre grupos de três dígitos (1 234,56); tire-o, ou confira o valor`,
  centsNegative: ({ shown }) => `${shown} é negativo: um pagamento precisa ser maior que zero`,
  centsWithDecimals: ({ shown }) =>
    `${shown} não são centavos inteiros: esta coluna é em centavos (1250 para R$ 12,50); para reais, dê à coluna o título "valor" ou "amount"`,
  notCents: ({ shown }) => `"${shown}" não é um número inteiro de centavos (1250 para R$ 12,50)`,
  zerosRestored: ({ written, read }) =>
    `zeros à esquerda recolocados: ${written} lido como ${read}`,
  documentScientific: ({ text }) =>
    `"${text}" foi convertido em notação científica pela planilha: formate a coluna como texto e digite o número de novo`,
  documentCharacters: ({ text }) =>
    `"${text}" não é um CPF ou CNPJ (só dígitos, com . - / permitidos)`,
  cnpjCheckDigits: ({ text }) =>
    `${text} não é um CNPJ válido (os dígitos verificadores não conferem)`,
  notCpfOrCnpj: ({ text }) =>
    `${text} não é um CPF (11 dígitos) nem um CNPJ (14 caracteres) com dígitos verificadores válidos`,
  cnpjEvenRestored: ({ digits, restored, keepZeros }) =>
    keepZeros
      ? `${digits} não é um CNPJ válido, nem com os zeros à esquerda recolocados (${restored}): confira-o e ${MANTER_ZEROS}`
      : `${digits} não é um CNPJ com dígitos verificadores válidos, nem com os zeros à esquerda recolocados (${restored})`,
  cpfOrCnpjWithoutZeros: ({ digits }) =>
    `${digits} perdeu os zeros à esquerda e pode ser um CPF ou um CNPJ: formate a coluna como texto e digite-o por inteiro`,
  cpfRestored: ({ digits, restored, maybeCnpj }) =>
    `${digits} não é um CPF válido com os zeros à esquerda recolocados (${restored}): ${maybeCnpj ? `confira-o; se for um CNPJ, escreva os 14 dígitos (${MANTER_ZEROS})` : 'confira-o'}`,
  cpfCheckDigits: ({ text, hint }) =>
    `${text} não é um CPF válido (os dígitos verificadores não conferem)${
      hint === 'checkPerson'
        ? ': confira com o CPF da pessoa'
        : hint === 'maybeCnpj'
          ? `: confira-o; se for um CNPJ, escreva os 14 dígitos (${MANTER_ZEROS})`
          : ''
    }`,
  cpfWithSlash: ({ text, written }) =>
    `${text} tem os 11 dígitos de um CPF válido, com uma barra que um CPF não tem: escreva ${written}`,
  keyTypeUnknown: ({ text }) => `"${text}" não é um tipo de chave: use ${TIPOS_DE_CHAVE}`,
  keyNotRowDocument: ({ type, key, document }) =>
    `a chave ${type} ${key} não é o documento desta linha, ${document}: uma chave ${type} é o próprio documento do dono`,
  keyScientific: ({ key }) =>
    `"${key}" foi convertida em notação científica pela planilha: formate a coluna como texto e digite a chave de novo`,
  keyDocument: ({ type, problem }, say) => `é uma chave ${type}, mas ${say(problem)}`,
  keyDocumentKind: ({ type, key, kind }) => `é uma chave ${type}, mas ${key} é um ${kind}`,
  keyEmail: ({ key, problem }, say) => `é uma chave EMAIL, mas "${key}" ${say(problem)}`,
  keyPhone: ({ key }) =>
    `é uma chave TELEFONE, mas "${key}" não é um celular com DDD (ex.: +55 11 98765-4321)`,
  keyRandom: ({ key }) =>
    `é uma chave aleatória (RANDOM_KEY), mas "${key}" não é uma (36 caracteres como 123e4567-e89b-12d3-a456-426614174000)`,
  keyCpfOrPhone: ({ key }) =>
    `${key} pode ser um CPF ou um telefone: informe o tipo (CPF ou TELEFONE) na coluna de tipo de chave`,
  keyTypeUntold: ({ key }) =>
    `não dá para saber o tipo da chave "${key}": informe-o na coluna de tipo de chave (${TIPOS_DE_CHAVE})`,
  emailKeyTooLong: ({ length, max }) =>
    `tem ${length} caracteres; uma chave Pix de e-mail tem no máximo ${max}`,
  emailKeySpace: () => 'tem um espaço: um endereço de e-mail não tem espaços',
  emailKeyNotAscii: ({ character }) =>
    `tem "${character}", um caractere fora do ASCII simples: chaves Pix de e-mail são só ASCII (sem acentos); confira a chave com o favorecido`,
  emailKeyShape: () =>
    'não é um endereço de e-mail: precisa de um nome, uma @ e um domínio (como nome@exemplo.com.br)',
  emailKeyTwoDots: () => 'tem dois pontos seguidos',
  emailKeyDotAtEdge: () => 'começa ou termina com ponto, antes ou depois da @',
  emailKeyNameCharacter: ({ character }) =>
    `tem "${character}" antes da @, que uma chave Pix de e-mail não pode ter`,
  emailKeyNoDomain: () => 'não tem domínio depois da @ (como exemplo.com.br)',
  emailKeyDomainUnderscore: () => 'tem "_" no domínio (depois da @), que um domínio não pode ter',
  emailKeyDomainHyphen: ({ label }) =>
    `tem uma parte do domínio que começa ou termina com "-" ("${label}")`,
  emailKeyDomainPartLong: () => 'tem uma parte do domínio com mais de 63 caracteres',
  emailKeyDomainCharacter: ({ character }) =>
    `tem "${character}" no domínio (depois da @), que um domínio não pode ter`,
  emailKeyNoDomainName: () => 'não termina num nome de domínio (como .com ou .com.br)',
  notAFile: () => 'não é um arquivo',
  fileMissing: () => 'não existe: confira o nome e a pasta',
  fileUnreadable: ({ errorCode }) => `não pode ser lido (${errorCode})`,
  fileEmpty: () => 'está vazio (0 bytes)',
  fileTooLarge: ({ bytes, limit }) =>
    `tem ${bytes} bytes, acima do limite de ${limit} (maxFileBytes): divida-o, ou aumente o limite`,
  fileBinary: () =>
    `não é um arquivo de texto CSV: tem bytes NUL (é uma pasta de trabalho .xlsx, ou UTF-16 sem marca de ordem de bytes?); ${SALVAR_COMO_CSV}`,
  notUtf8: ({ at }) =>
    `não é UTF-8 válido (${posicao(at)}), mas encoding está configurado como utf-8: use auto ou windows-1252, ou ${SALVAR_COMO_CSV}`,
  mixedEncodings: ({ good, bad }) =>
    `mistura codificações: caracteres UTF-8 (${posicao(good)}) e bytes que não são UTF-8 (${posicao(bad)}); ${SALVAR_COMO_CSV}, ou configure encoding com a codificação em que ele está`,
  lineTooLong: ({ bytes, line, max }) =>
    `tem uma linha de ${bytes} bytes (linha ${line}), acima de ${max}: isto não é um arquivo de pagamentos`,
  headerUnusable: ({ line, problem }, say) =>
    `tem um cabeçalho (linha ${line}) que não pode ser usado: ${say(problem)}`,
  tooManyColumns: ({ count, max }) =>
    `o cabeçalho tem ${count} colunas; um arquivo de pagamentos tem no máximo ${max}`,
  sameColumnTwice: ({ first, second, field }) =>
    `as colunas "${first}" e "${second}" trazem as duas o ${CAMPOS[field]}: deixe uma`,
  twoAmountColumns: ({ cents, reais }) =>
    `"${cents}" (centavos) e "${reais}" (reais) trazem os dois o valor: deixe um`,
  missingColumns: ({ fields }) =>
    `faltam colunas: ${fields
      .map((field) =>
        field === 'amountReais'
          ? `o valor: ${aceitos('amountReais')}, ou ${aceitos('valueCents')}`
          : aceitos(field),
      )
      .join('; ')}`,
  blankRun: ({ max, line }) =>
    `tem mais de ${max} linhas em branco seguidas a partir da linha ${line}: isto não é um arquivo de pagamentos`,
  quoteNotClosed: ({ line }) =>
    `tem uma aspa aberta na linha ${line} que nunca se fecha, então o resto do arquivo não pode ser lido (o arquivo foi cortado?)`,
  recordTooLong: ({ line, max }) =>
    `tem um registro a partir da linha ${line} com mais de ${max} caracteres: isto não é um arquivo de pagamentos, ou falta uma aspa`,
  notCsv: ({ line, detail }) => `não pode ser lido como CSV a partir da linha ${line}: ${detail}`,
  noHeader: () => 'não tem linha de cabeçalho (só linhas em branco)',
  noRows: () => 'tem cabeçalho, mas nenhuma linha de pagamento',
  totalLineUnreadable: ({ line, text }) =>
    `a linha de total (linha ${line}) traz um valor que não pode ser lido ("${text}"), então o arquivo não pode ser conferido com ela`,
  sidecarLine: ({ sidecar, line, text }) =>
    `${sidecar} linha ${line} ("${text}") não é "rows: N", "total: 1.234,56" nem "cents: 123456"`,
  sidecarSaysNothing: ({ sidecar }) =>
    `${sidecar} não traz nem a quantidade de linhas ("rows: N") nem a soma ("total: 1.234,56")`,
  controlUncheckable: ({ source: from, cents, lines }) =>
    `${origem(from)} traz a soma de ${formatCents(cents)}, que não pode ser conferida enquanto os valores da linha ${lines.slice(0, 5).join(', ')}${lines.length > 5 ? '…' : ''} não puderem ser lidos: corrija-os e envie o arquivo de novo`,
  controlMismatch: ({ source: from, file, control }) =>
    `o total de controle não confere: o arquivo tem ${linhasESoma(file)}, mas ${origem(from)} diz ${linhasESoma(control)}; o arquivo pode ter sido cortado ou editado, então nada dele é pago: exporte-o de novo, ou corrija as linhas ou o total, e ponha o arquivo corrigido na entrada`,
  overFileLimit: ({ cents, limitCents }) =>
    `as linhas válidas somam ${formatCents(cents)}, acima do limite de ${formatCents(limitCents)} por arquivo (maxFileCents)`,
  fileChanged: () =>
    'o arquivo mudou enquanto era lido (ainda estava sendo gravado?): nada dele é enviado; ele é lido de novo como um arquivo novo quando parar de mudar',
  fileOld: ({ changedAt, ageMs }) =>
    `ele foi alterado pela última vez há ${ageMs < DIA_MS ? many(Math.floor(ageMs / 3_600_000), 'hora', 'horas') : many(Math.floor(ageMs / DIA_MS), 'dia', 'dias')} (${dia(changedAt)}), mais tempo que duplicateWindow: pode ser um arquivo antigo posto de novo, por isso nada dele é pago; se ele for devido agora, salve-o de novo e ponha-o na entrada`,
  heldJournaled: ({ orderId, file, line, at, state, retry, hintFlags }) =>
    `o ID de pagamento ${orderId} já está no diário, vindo de ${file}, linha ${line}, ${dia(at)} (agora ${ESTADOS[state]}): não é enviado de novo${retry ? `; para enviar esse pagamento de novo de propósito, execute: payouts retry ${orderId}${hintFlags}` : ''}. Se for outro pagamento, dê a ele um ID de pagamento próprio`,
  heldDuplicate: ({ file, line, at, state, transactionId, newFile, hintFlags }) =>
    `possível duplicata: o mesmo documento e valor de ${file}, linha ${line}, registrado no diário ${dia(at)} (agora ${ESTADOS[state]}${transacao(transactionId)}); não enviado. Se for mesmo um pagamento novo: payouts approve "${newFile}" --new-batch${hintFlags} o lista, e só o paga de novo quando receber também a opção --repeats e a contagem dessas linhas que ele lista`,
  heldSameReference: ({ reference, file, line, at, state, transactionId, ...held }) =>
    `possível duplicata: a mesma referência (${reference}) para o mesmo documento de ${file}, linha ${line}, registrado no diário ${dia(at)} (agora ${ESTADOS[state]}${transacao(transactionId)}; ${formatCents(held.paidCents)} lá, ${formatCents(held.cents)} aqui); retido qualquer que seja a idade, não enviado. Se for mesmo um pagamento novo: payouts approve "${held.newFile}" --new-batch${held.hintFlags} o lista, e só o paga de novo quando receber também a opção --repeats e a contagem dessas linhas que ele lista`,
  heldCovered: ({ file, line, at, state, transactionId }) =>
    `já ${state === 'paid' ? 'pago' : 'enviado'} por ${file}, linha ${line}, ${dia(at)}${transacao(transactionId)}: não é enviado de novo`,
  heldChangesPaid: ({ file, line, state, paidCents, cents }) =>
    `muda uma linha que ${file} já ${state === 'paid' ? 'pagou' : 'enviou'} (linha ${line}, o mesmo documento, ${formatCents(paidCents)} lá, ${formatCents(cents)} aqui): não é enviada como pagamento novo; se corrige aquele valor, pague a diferença num arquivo próprio; se é outro pagamento, pague-o num arquivo com outro nome`,
  heldChangesPayee: ({
    file,
    line,
    at,
    state,
    transactionId,
    cents,
    paidKey,
    paidName,
    key,
    name,
    newFile,
    hintFlags,
  }) =>
    `muda a chave Pix ou o nome de ${file}, linha ${line}: ${formatCents(cents)} ${state === 'paid' ? 'foram pagos' : 'foram enviados'} à chave Pix ${paidKey} (${paidName}) ${dia(at)}${transacao(transactionId)}; esta linha traz ${key} (${name}). Não está paga aqui e não é enviada: se o dinheiro foi para a pessoa errada, peça a quem recebeu que o devolva pelo banco e depois pague a chave certa: payouts approve "${newFile}" --new-batch${hintFlags} lista esta linha como repetição daquele pagamento e só a paga quando você der também a opção --repeats com a contagem listada`,
  heldFailedBefore: ({ file, line, orderId, transactionId, state, hintFlags }) =>
    `repete ${file}, linha ${line} (ID de pagamento ${orderId}${transacao(transactionId)}), que ${state === 'rejected' ? 'o gateway recusou' : `terminou ${ESTADOS[state]} no gateway`}: um pagamento que falhou não é reenviado só porque um arquivo o repete; para reenviá-lo de propósito, execute: payouts retry ${orderId}${hintFlags}`,
  heldForCopy: ({ file, batchId, at, earlierBatchId, hintFlags }) =>
    `não é enviada enquanto um arquivo posterior de mesmo nome, ${file} (lote ${batchId}, ${dia(at)}), espera uma pessoa, mesmo que o saldo a cubra: se ele corrige este arquivo, execute: payouts approve "${file}" --corrects ${earlierBatchId}${hintFlags} (só as linhas dele são pagas); se for uma folha nova, execute: payouts approve "${file}" --new-batch${hintFlags} (os dois são pagos)`,
  heldIdentical: ({ line, file, hintFlags }) =>
    `idêntica à linha ${line} deste arquivo (o mesmo nome, documento, chave Pix e valor): não é enviada até que uma pessoa confirme que as duas são devidas: payouts approve "${file}" --identical${hintFlags}`,
  heldSameName: ({ file, batchId, at, newFile, hintFlags, repeats = [], moreRepeats = 0 }) =>
    `retida com o arquivo inteiro: ele tem o mesmo nome de ${file} (lote ${batchId}, ${dia(at)}) e repete algumas das suas linhas${quaisRepetem(repeats, moreRepeats)}, então pode ser aquele arquivo de novo ou a próxima folha; se for uma folha nova, execute: payouts approve "${newFile}" --new-batch${hintFlags}`,
  // Um problema de arquivo que o diário guardou só em inglês.
  english: ({ text }) => text,
  rowsRepeatInFile: ({ rows, cents, example }, say) =>
    `${rows === 1 ? '1 linha repete' : `${rows} linhas repetem`} exatamente uma linha anterior do mesmo arquivo (${formatCents(cents)}), retida para uma pessoa decidir: ${say(example)}`,
  rowsChangePaid: ({ rows, example }, say) =>
    `${rows === 1 ? '1 linha muda' : `${rows} linhas mudam`} um pagamento já feito, retida para uma pessoa decidir: ${say(example)}`,
  copyFreezes: ({ file, batchId, rows, cents, newFile, hintFlags }) =>
    `enquanto ele espera, nada de ${file} (lote ${batchId}: ${rows === 1 ? '1 linha' : `${rows} linhas`}, ${formatCents(cents)}) é enviado, mesmo que o saldo o cubra: se este arquivo o corrige, execute: payouts approve "${newFile}" --corrects ${batchId}${hintFlags} (só as linhas deste arquivo são pagas); se for uma folha nova, execute: payouts approve "${newFile}" --new-batch${hintFlags} (os dois são pagos)`,
  rowsRepeatFailed: ({ rows, cents, file, hintFlags, example }, say) =>
    `${rows === 1 ? '1 linha repete' : `${rows} linhas repetem`} sem mudança um pagamento que falhou no gateway (${formatCents(cents)}): um pagamento que falhou nunca é reenviado só porque um arquivo o repete; para reenviá-lo de propósito, execute: payouts retry "${file}"${hintFlags} (por exemplo: ${say(example)})`,
  heldRowAt: ({ line, name, cents, why }, say) =>
    `linha ${line}: ${name}, ${formatCents(cents)}: ${say(why)}`,
  heldRowsMore: ({ rows }) =>
    rows === 1
      ? '… e mais 1 linha retida, no arquivo de resultado'
      : `… e mais ${rows} linhas retidas, todas no arquivo de resultado`,
  rowsRepeatOtherFile: ({ rows, cents }) =>
    `${rows === 1 ? '1 linha repete' : `${rows} linhas repetem`} um pagamento de outro arquivo, pelo documento e valor ou pela referência (${formatCents(cents)}): não ${rows === 1 ? 'é enviada' : 'são enviadas'} até uma pessoa responder; cada resposta paga:`,
  namedAsEarlier: ({ file, batchId, at, repeats = [], moreRepeats = 0 }) =>
    `retido com o arquivo inteiro: ele tem o mesmo nome de ${file} (lote ${batchId}, ${dia(at)}) e repete algumas das suas linhas${quaisRepetem(repeats, moreRepeats)}; só uma pessoa pode dizer o que ele é, e cada resposta paga:`,
  readingCorrects: ({ file, batchId, pays, hintFlags }) =>
    `o mesmo arquivo, corrigido (linhas acrescentadas ou corrigidas): payouts approve "${file}" --corrects ${batchId}${hintFlags} paga ${pays.rows === 1 ? '1 linha' : `${pays.rows} linhas`} (${pagos(pays)}); o que o lote ${batchId} pagou não é pago de novo`,
  readingNewBatch: ({ file, pays, repeating, hintFlags }) => {
    const comando = `payouts approve "${file}" --new-batch${hintFlags}`;
    const umaSo = repeating.rows === 1;
    const repetidas = umaSo ? 'a linha que repete' : `as ${repeating.rows} linhas que repetem`;
    const deNovo = umaSo
      ? 'é paga de novo só quando você der também a opção --repeats com o número 1, depois de conferir que ela é devida duas vezes'
      : `são pagas de novo só quando você der também a opção --repeats com a contagem delas, ${repeating.rows}, depois de conferir que cada uma é devida duas vezes`;
    if (pays.rows === 0) {
      return `pagamentos novos mesmo assim: ${comando} lista ${repetidas} um pagamento já feito ou em andamento (${pagos(repeating)}); ${umaSo ? 'ela' : 'elas'} ${deNovo}`;
    }
    const novas = `uma folha nova: ${comando} paga ${pays.rows === 1 ? 'a linha que não repete' : `as ${pays.rows} linhas que não repetem`} nada (${pagos(pays)})`;
    return repeating.rows === 0
      ? novas
      : `${novas}; ${repetidas} um pagamento já feito ou em andamento (${pagos(repeating)}) ${deNovo}`;
  },
  orderIdsJournaled: ({ rows, example }, say) =>
    rows === 1
      ? `1 linha tem um ID de pagamento já registrado por outro arquivo: não enviada (${say(example)})`
      : `${rows} linhas têm IDs de pagamento já registrados por outro arquivo: não enviadas (${say(example)})`,
  pendingTooLong: ({ rows, age, orderId, hintFlags }) => {
    const consulta = `payouts get --order-id ${orderId}${hintFlags}`;
    return rows === 1
      ? `1 pendente há ${age} desde o envio: consulte-o no gateway (${consulta}); um Pix se liquida em segundos`
      : `${rows} pendentes há até ${age} desde o envio: consulte-os no gateway (o mais antigo: ${consulta}); um Pix se liquida em segundos`;
  },
  resultNotWritten: ({ path, why }) =>
    `o arquivo de resultado ${path} não pôde ser gravado (${why}); ele é gravado de novo na próxima execução`,
  balanceShortfall: ({ cents, count, feeCents, availableCents, readError }) => {
    const tarifas = feeCents * count;
    const descrito =
      tarifas === 0
        ? formatCents(cents)
        : `${formatCents(cents + tarifas)} (${formatCents(cents)} em ${many(count, 'pagamento', 'pagamentos')} e ${formatCents(tarifas)} de tarifas a ${formatCents(feeCents)} cada, feePerPayoutCents)`;
    return availableCents === undefined
      ? `o saldo não pôde ser lido (${readError ?? 'sem resposta'}), então ${descrito} não pode ser conferido com ele`
      : `o saldo deixa ${formatCents(availableCents)} para os ${descrito} deste lote`;
  },
  balanceBlocks: ({ shortfall }, say) =>
    `${say(shortfall)} (balanceCheck: block): nada dele é enviado`,
  waitingToSettle: ({ settle, file }) =>
    `aguardando que ele pare de mudar: é recebido quando seu tamanho e sua hora de modificação ficarem ${settle} sem mudar (inboxSettle), ou quando um ${file}.done ao lado disser que está completo`,
  processingFull: () =>
    'nove arquivos com esse nome ainda estão em processing/: ele é recebido quando um deles for arquivado',
  takenByHost: ({ host }) =>
    `o servidor ${host} está recebendo o arquivo: as linhas dele são enviadas pelo servidor que estiver livre quando ele terminar de ler o arquivo inteiro`,
  cannotRead: ({ systemCode, permission }) =>
    permission
      ? `não pode ser lido (${systemCode}): o usuário que executa o payouts não tem permissão para lê-lo (ele foi salvo legível só por quem o criou); dê permissão de leitura a ele e ponha-o na entrada de novo, e veja no payouts doctor como deixar legível todo arquivo posto na entrada`
      : `não pode ser lido (${systemCode}): verifique o arquivo e o disco, e ponha-o na entrada de novo`,
  awaitingApproval: ({ file, hintFlags }) =>
    `nada dele é enviado até uma pessoa movê-lo para approved/ ou executar: payouts approve "${file}"${hintFlags} (o .report.txt dele diz o que seria enviado)`,
  answerApproves: () =>
    'uma resposta acima que libera uma linha aprova o arquivo também: a próxima execução envia as linhas liberadas com o resto dele',
  replacedByCopy: ({ copyFile, copyBatchId, at, next }) =>
    `substituído pela cópia corrigida ${copyFile} (lote ${copyBatchId}), que chegou ${momento(at)}: nada dele é enviado${copiaAguarda(next)}`,
  fileReplaced: ({ verb, file, batchId, copyFile, copyBatchId, at, next }) =>
    `${verb ? `payouts ${verb}: ` : ''}${file} (lote ${batchId}) foi substituído pela cópia corrigida ${copyFile} (lote ${copyBatchId}), que chegou ${momento(at)}: nada dele é enviado, e nada resta a aprovar${copiaAguarda(next)}`,
  cutShort: ({ file }) =>
    `uma execução parou enquanto lia ${file}, e o arquivo não está mais em processing/: nenhuma linha dele é enviada até o mesmo arquivo ser posto na entrada de novo`,
  fileNotInProcessing: ({ file }) =>
    `${file} não está mais em processing/: as linhas dele continuam sendo enviadas e acompanhadas, e o resultado é gravado em results/`,
  takenOnceRenamed: () => 'ele é recebido quando for renomeado para o nome final',
  hiddenPayoutFile: () =>
    'nenhuma linha dele é paga: renomeie-o sem o ponto inicial para que seja pago, ou remova-o',
  notARegularFile: () => 'ponha na entrada o próprio arquivo de pagamentos',
  clockBehindJournal: ({ nowMs, latestMs, timeZone }) =>
    `o relógio deste computador marca ${instante(nowMs, timeZone)} (${timeZone}), antes de ${instante(latestMs, timeZone)}, o horário mais recente do diário: nada foi feito. As regras de quem é pago comparam esses horários, e um relógio que voltou poderia pagar um arquivo de novo. Acerte o relógio do servidor (ative a sincronização por NTP, por exemplo timedatectl set-ntp true) e execute de novo`,
  hostClockOff: ({ host, offsetMs, way, boundMs, watching }) =>
    `o relógio do servidor ${host} está ${Math.round(Math.abs(offsetMs) / 1000)} s ${way === 'ahead' ? 'adiantado' : 'atrasado'} em relação ao banco de dados do diário, mais do que maxClockSkew (${Math.round(boundMs / 1000)} s) permite: ele não paga nada até o relógio ser acertado. Mantenha-o certo por NTP (chrony ou systemd-timesyncd); depois ${watching ? 'ele continua sozinho' : 'execute de novo'}`,
  journalNewerSchema: ({ path, schema, latest }) =>
    `o diário ${path} está na versão de esquema ${schema}, mais nova do que este programa conhece (${latest}): use um payouts mais novo (payouts --version diz qual é este). Nada foi enviado`,
  journalMoved: ({ address, at }) =>
    `o diário desta pasta foi movido para o PostgreSQL (${address}) em ${instante(at, 'UTC')} UTC por payouts journal copy e não é mais usado aqui: defina journal (PAYOUTS_JOURNAL) com a URL desse banco em cada servidor desta pasta`,
  journalOnNetworkFilesystem: ({ folder, fsType }) =>
    `a pasta do diário ${folder} está num sistema de arquivos de rede (tipo ${fsType}): ali as travas do SQLite não são seguras; ponha a pasta de trabalho (home) num disco local. Nada foi enviado`,
  retryIdTaken: ({ orderId, retryId }) =>
    `${orderId}: não pode ser reenviado como ${retryId}: esse ID de pagamento já está no diário (vindo de outro arquivo); nada mudou`,
  journalRefused: ({ detail }) =>
    `o diário recusou a mudança (${detail}): o que ele já tinha gravado antes fica como estava; execute de novo`,
  releaseTurnedDown: () =>
    'ele foi recusado (payouts reject); para enviá-lo mesmo assim, ponha-o na entrada para ser conferido de novo',
  releaseAlreadyReleased: () => 'estes bytes já foram liberados: nada é enviado duas vezes',
  releaseUnknownBytes: () =>
    'os bytes dele não batem com nenhum arquivo aguardando aprovação (mudou desde que foi conferido?): ponha-o na entrada para ser conferido de novo',
  heldForBalance: ({ why }, say) =>
    `retida: ${why === null ? 'o saldo não cobriu este arquivo' : say(why)}; conferido de novo a cada execução`,
  heldWithFile: ({ problems, state }, say) =>
    `retida, nada deste arquivo é enviado: ${problems.map(say).join('; ') || state}`,
  coverUndone: ({ orderId, file, line, state, own, hintFlags }) =>
    `não paga: o pagamento que a cobria (${orderId}, ${file}, linha ${line}) ${DESFEITO[state] ?? ESTADOS[state]}; ela só é paga de novo reenviando aquele pagamento (payouts retry ${orderId}${hintFlags}), nunca por esta linha. ${own}`,
  takenOverByLine: ({ state, line, file }) =>
    `estava ${ESTADOS[state]}, nunca enviada; substituída pela linha ${line} de ${file}`,
  takenOverBy: ({ file }) => `nunca enviada; substituída por ${file}`,
  leftOutByCopy: ({ file }) =>
    `nunca enviada; mudada ou deixada de fora pela cópia corrigida ${file}`,
  correctedIn: ({ first, file }, say) => `${say(first)}; corrigida em ${file}`,
  sentAgainOnPurpose: ({ by, at, retryId, earlier }) =>
    `${earlier === null ? '' : `${earlier}; `}reenviado de propósito por ${by} ${dia(at)} (payouts retry), como ${retryId}`,
  repeatSentAgain: ({ by, at, retryId }) =>
    `o pagamento que ela repete foi reenviado de propósito por ${by} ${dia(at)} (payouts retry), como ${retryId}: não é enviada por este arquivo`,
  auditJournaled: ({ batchId, line }) =>
    `registrado no diário a partir do lote ${batchId}, linha ${line}`,
  auditReplaced: ({ batchId, line }) =>
    `substituído pelo lote ${batchId}, linha ${line}: o conteúdo anterior nunca chegou ao gateway`,
  auditClaimed: ({ owner, attempt }) => `tomado por ${owner} (tentativa ${attempt})`,
  auditCheckedAgain: ({ when, said }, say) =>
    `${when === 'claimed' ? 'conferido de novo ao ser tomado para envio' : 'pesado quando a correção foi respondida'}: ${say(said)}`,
  auditLookedUpAfterLoss: () =>
    'recuperação: consultado no gateway antes do primeiro envio por este diário (o diário perdido pode tê-lo enviado)',
  auditLeaseEnded: ({ owner }) =>
    `nenhuma resposta registrada antes do fim da reserva: resolvido por consulta (${owner})`,
  auditResending: ({ notFound, secondsSinceSent }) =>
    `não encontrado ${notFound === 1 ? '1 vez' : `${notFound} vezes`}, a última agora mesmo, ${secondsSinceSent} s depois do último envio: enviado de novo com o mesmo ID de pagamento`,
  auditClaimedNotSent: ({ why }, say) => `reservado e não enviado (${say(why)}): de volta à fila`,
  auditClaimedAheadNotSent: ({ why }, say) =>
    `reservado antes do seu pedido e não enviado (${say(why)}): de volta à fila`,
  auditClaimTooOld: () =>
    'não enviado: sua reserva tinha mais da metade do prazo quando o pedido ia sair (o processo foi parado ou pausado); devolvido à fila',
  runStopped: () => 'a execução parou',
  runFailed: () => 'a execução falhou',
  sendingPaused: () => 'envio pausado',
  claimWaitedTooLong: () => 'esperou demais por uma vaga',
  auditBalanceCovers: () => 'o saldo agora cobre o lote',
  auditFrozen: ({ said }, say) => `congelado: ${say(said)}`,
  auditUnfrozen: ({ why }, say) => `descongelado: ${say(why)}`,
  auditCoverEnded: ({ orderId, state, said }, say) =>
    `o pagamento que o cobria, ${orderId}, terminou ${ESTADOS[state]}: ${say(said)}`,
  auditRetry: ({ attempt, base, orderId, state, why }, say) =>
    `tentativa ${attempt} de ${base}, depois de ${orderId} ${ESTADOS[state]}: ${say(why)}`,
  auditRetriedAs: ({ why, retryId }, say) => `${say(why)}, como ${retryId}`,
  auditSentAgainBy: ({ by, at }) => `reenviado de propósito por ${by} ${dia(at)} (payouts retry)`,
  auditNameWeighed: () => 'pesado contra os arquivos do mesmo nome daquele dia',
  auditRepeatsFailed: () => 'repete um pagamento que falhou',
  auditCorrectedCopyOf: ({ batchId }) => `uma cópia corrigida do lote ${batchId}`,
  auditCopyTurnedDown: ({ why }, say) =>
    `a cópia que o tinha substituído foi recusada (${say(why)})`,
  auditFreezerTurnedDown: ({ why }, say) =>
    `o arquivo posterior que o congelou foi recusado (${say(why)})`,
  auditCovered: ({ why, said }, say) => `${say(why)}: ${say(said)}`,
  auditTakenOver: ({ why, by }, say) => `${say(why)}: substituído por ${by}`,
  auditTakesOver: ({ why, orderId }, say) => `${say(why)}: substitui ${orderId}`,
  auditReplaces: ({ why }, say) => `${say(why)}: substitui uma linha que precisava de uma pessoa`,
  auditLeftOut: ({ why, file }, say) => `${say(why)}: mudado ou deixado de fora por ${file}`,
  auditGivenBack: ({ why }, say) => `devolvido: ${say(why)}`,
  auditCoveredByRetry: ({ retryId, why }, say) => `coberto por ${retryId}, ${say(why)}`,
  eventApproved: ({ count, cents }) => `${pagamentos(count)}, ${formatCents(cents)}`,
  eventReason: ({ reason }) => reason,
  eventIdenticalDue: ({ rows }) =>
    rows === 1 ? '1 linha idêntica é devida' : `${rows} linhas idênticas são devidas`,
  eventCorrects: ({ batchId }) => `uma cópia corrigida do lote ${batchId}`,
  eventNewPayments: ({ rows, confirmed, repeating }) =>
    `${rows === 1 ? '1 linha retida é um pagamento novo' : `${rows} linhas retidas são pagamentos novos`}${
      confirmed
        ? `; ${repeating.length === 1 ? '1 delas repete um pagamento' : `${repeating.length} delas repetem pagamentos`}, como a pessoa confirmou: ${repeating.map(repeticao).join('; ')}`
        : repeating.length > 0
          ? `; ${repeating.length === 1 ? '1 linha que repete um pagamento continua retida' : `${repeating.length} linhas que repetem pagamentos continuam retidas`}`
          : ''
    }`,
  eventReplacedBy: ({ batchId }) => `pela sua cópia corrigida, lote ${batchId}`,
  eventMovedIntoApproved: () => 'movido para approved/',
  eventSentAgainAs: ({ line, orderId, state, retryId }) =>
    `linha ${line}: ${orderId} (${ESTADOS[state]}) reenviado como ${retryId} (payouts retry)`,
  pendingTooLongIn: ({ file, rows, age, orderId, hintFlags }) =>
    `payouts run: ${rows === 1 ? `1 pagamento pendente há ${age} desde o envio` : `${rows} pagamentos pendentes há até ${age} desde o envio`}, em ${file}: uma pessoa precisa consultá-${rows === 1 ? 'lo' : 'los'} no gateway (payouts get --order-id ${orderId}${hintFlags}); nada é reenviado enquanto isso`,
  approvedSentNow: ({ file }) => `${file}: aprovado; é enviado agora`,
  progress: ({ total, sent, sending, toCheck, settled, perSecond }) =>
    [
      `${sent}/${total} ${sent === 1 ? 'enviado' : 'enviados'}`,
      ...(sending > 0 ? [`${sending} enviando`] : []),
      ...(toCheck > 0 ? [`${toCheck} a conferir`] : []),
      `${settled} ${settled === 1 ? 'liquidado' : 'liquidados'}`,
      `${UMA_CASA.format(perSecond)} linhas/s`,
    ].join(' · '),
  progressLine: ({ progress }, say) => `progresso: ${say(progress)}`,
  approved: ({ file, batchId, count, cents }) =>
    `${file} (lote ${batchId}): aprovado: ${pagamentos(count)}, ${formatCents(cents)} ao todo. Um \`payouts watch\` em execução ${count === 1 ? 'o envia' : 'os envia'} agora; senão, o próximo \`payouts run\`.`,
  linkedAsCopy: ({ file, batchId, corrects, by, count }) =>
    `${file} (lote ${batchId}): ligado como cópia corrigida do lote ${corrects} por ${by}; ${pagamentos(count)} a enviar na próxima execução.`,
  releasedIdentical: ({ file, batchId, count, cents, by }) =>
    `${file} (lote ${batchId}): ${pagamentos(count)}, ${formatCents(cents)}, ${count === 1 ? 'liberado' : 'liberados'} por ${by} como devidos além das linhas idênticas a ${count === 1 ? 'ele' : 'eles'}; a próxima execução ${count === 1 ? 'o envia' : 'os envia'}.`,
  notAwaiting: ({ verb, file, waiting }) =>
    `payouts ${verb}: nenhum arquivo chamado "${file}" aguarda aprovação (aguardando: ${waiting.join(', ') || 'nenhum'})`,
  approveOneAnswer: () =>
    'payouts approve: dê uma só opção entre --new-batch, --identical e --corrects de cada vez',
  approveOptionsNeedNewBatch: () =>
    'payouts approve: --repeats, --rows e --except só valem com --new-batch',
  approveRowsOrExcept: () => 'payouts approve: dê --rows ou --except, não as duas',
  approveChanged: ({ file }) =>
    `payouts approve: ${file} mudou depois de conferido (seus bytes não correspondem a nenhum lote aguardando): nada foi aprovado; ponha-o na entrada para ser conferido de novo`,
  approveNoFreeName: ({ file }) => `payouts approve: approved/ não tem um nome livre para ${file}`,
  approveNoBatch: ({ batchId }) => `payouts approve: não existe o lote ${batchId}`,
  approveNothingHeld: ({ file, hintFlags }) =>
    `payouts approve: nenhum arquivo chamado "${file}" tem linhas retidas como possíveis duplicatas, pelo nome ou como linhas idênticas: nada mudou (payouts status${hintFlags} lista todos os arquivos)`,
  turnedDownBy: ({ reason }) => `recusado por uma pessoa: ${reason}`,
  releasedIdenticalBy: ({ by }) =>
    `liberado por ${by}: as duas linhas idênticas são devidas (payouts approve --identical)`,
  releasedNewBy: ({ by, repeats }) =>
    `liberado por ${by}: pagamentos novos, não cópias de um arquivo anterior (payouts approve --new-batch${repeats === null ? '' : ` --repeats ${repeats}`})`,
  linkedCopyBy: ({ by, batchId }) =>
    `ligado por ${by} como cópia corrigida do lote ${batchId} (payouts approve --corrects)`,
  turnedDown: ({ file, batchId, moved }) =>
    `${file}${batchId === null ? '' : ` (lote ${batchId})`}: recusado${moved ? ' e movido para rejected/' : ''}; nenhuma das linhas dele será enviada. Um arquivo corrigido pode ser posto na entrada.`,
  rejectNoLongerWaiting: ({ file }) =>
    `payouts reject: ${file} não aguarda mais (foi aprovado nesse meio-tempo?): nada mudou`,
  retryQueued: ({ file, batchId, count, cents, by }) =>
    `${file} (lote ${batchId}): ${pagamentos(count)}, ${formatCents(cents)}, a reenviar, a pedido de ${by}; a próxima execução ${count === 1 ? 'o envia' : 'os envia'}:`,
  retryLine: ({ line, from, to }) => `linha ${line}: ${from} -> ${to}`,
  retryNotFailed: ({ orderId, state, retriedAs }) =>
    `payouts retry: ${orderId} está ${ESTADOS[state]}${retriedAs === null ? '' : `: já foi reenviado, como ${retriedAs}`}; só um pagamento que falhou, foi recusado, cancelado ou devolvido é reenviado. Nada mudou`,
  retryNothing: ({ target, file, hintFlags }) =>
    `payouts retry: nenhum ID de pagamento "${target}", e nenhum arquivo chamado "${file}" com um pagamento que falhou, foi recusado, cancelado ou devolvido e ainda não foi reenviado: nada mudou (payouts status${hintFlags} lista todos os arquivos)`,
  templateWritten: ({ path }) => `Escrito: ${path}`,
  templateHowToFill: ({ path }) =>
    `Preencha uma linha por pagamento (Valor como 1.234,56; CPF/CNPJ com ou sem os pontos; Tipo de chave e ID do pagamento podem ficar vazios), depois ${SALVAR_COMO_CSV.replace('salve-o de novo', 'salve-o')}, e confira-o com: payouts validate "${path}"`,
  templateExists: ({ path }) =>
    `payouts template: ${path} já existe: nada foi escrito (dê outro nome, ou apague-o antes)`,
  journalCopyNotPostgres: () =>
    'payouts journal copy: --to recebe a URL de um banco PostgreSQL, como postgres://usuario:senha@servidor:5432/payouts: nada foi copiado',
  journalCopyBusy: ({ command, pid, host, since }) =>
    `payouts journal copy: outro processo do payouts (${command === null ? '' : `payouts ${command}, `}pid ${pid} em ${host}, desde ${new Date(since).toISOString()}) está trabalhando nesta pasta: nada foi copiado, pois a cópia de um diário sendo escrito não seria exata. Pare-o (o serviço, as execuções do cron) e copie de novo.`,
  journalCopyStarted: ({ from, to }) =>
    `Copiando o diário ${from} para ${to}, numa só transação: interrompida, ela deixa o banco vazio.`,
  journalCopyCopied: ({ batches, payouts, lines, audit, events, journalId }) =>
    `Copiados: ${many(batches, 'lote', 'lotes')}, ${pagamentos(payouts)}, ${many(lines, 'linha que não é pagamento', 'linhas que não são pagamentos')}, ${many(audit, 'registro de auditoria', 'registros de auditoria')}, ${many(events, 'evento de lote', 'eventos de lote')}; o diário mantém sua identidade (${journalId}), então seus IDs de pagamento e a verificação de perda seguem como antes.`,
  journalCopyCompared: ({ batches }) =>
    `Linhas e somas por estado, no SQLite e no PostgreSQL (e em ${batches === 1 ? 'o único lote com pagamentos' : `cada um dos ${batches} lotes com pagamentos`}, iguais nos dois):`,
  journalCopyState: ({ state, sqlite, postgres }) =>
    `${ESTADOS[state].padEnd(12)} ${String(sqlite.count).padStart(8)} ${formatCents(sqlite.cents).padStart(18)}   ${String(postgres.count).padStart(8)} ${formatCents(postgres.cents).padStart(18)}`,
  journalCopyNext: ({ address }) =>
    `A seguir: em cada servidor desta pasta, defina journal com a URL do banco (PAYOUTS_JOURNAL=${address}, com a senha como você a deu) e inicie o payouts de novo. O diário SQLite fica marcado como movido: daqui em diante todo comando se recusa a trabalhar com ele (payouts status ainda o lê), e nenhuma linha é paga pelos dois diários. Guarde-o como registro; docs/postgres.md diz como voltar a ele.`,
  journalCopyNotEmpty: ({ address, tables, schema }) =>
    `payouts journal copy: o banco ${address} não está vazio (${tables.length > 0 ? `tabelas com linhas: ${tables.join(', ')}` : `um diário na versão de esquema ${schema}`}): nada foi escrito. Copie para um banco novo e vazio (CREATE DATABASE payouts).`,
  journalCopyDiffers: ({ address, batches }) =>
    `payouts journal copy: a cópia em ${address} não tinha as mesmas linhas e somas do diário${batches.length > 0 ? ` (lotes ${batches.join(', ')})` : ''}: foi desfeita, nada foi escrito. Relate isto; o diário não mudou.`,
  journalCopyLockLost: () =>
    'payouts journal copy: a trava da pasta foi perdida durante a cópia (este processo parou, ou outro a tomou): a cópia foi desfeita, nada foi escrito. Copie de novo.',
  releasedByHost: ({ host }) =>
    `o servidor ${host} está liberando o arquivo: as linhas dele são enviadas pelo servidor que estiver livre quando ele estiver em processing/`,
  journalCompactNothing: ({ before }) =>
    `Nada a compactar: nenhum lote terminado recebido antes de ${before} tem histórico no diário.`,
  journalCompactStarted: ({ before, batches, entries, archive }) =>
    `Tirando o histórico de ${many(batches, 'lote terminado', 'lotes terminados')} recebidos antes de ${before} (${many(entries, 'registro de auditoria', 'registros de auditoria')}) para ${archive}, mil pagamentos por vez: se interrompido, rode de novo.`,
  journalCompactDone: ({ batches, entries, archive, longestHoldMs }) =>
    `Tirados: ${many(entries, 'registro de auditoria', 'registros de auditoria')} de ${many(batches, 'lote', 'lotes')}, agora em ${archive}; o diário ficou travado para escrita no máximo ${longestHoldMs} ms por vez. Cada ID de pagamento, e tudo o que as regras de quem é pago leem, ficam.`,
  journalCompactBytes: ({ fileBefore, walBefore, fileAfter, walAfter, free, checkpointed }) =>
    `Diário ${bytes(fileBefore)} + WAL ${bytes(walBefore)} antes, ${bytes(fileAfter)} + WAL ${bytes(walAfter)} depois${checkpointed ? '' : ' (um leitor ainda estava no WAL: a próxima consolidação o esvazia)'}; ${bytes(free)} do arquivo estão livres, preenchidos por novos pagamentos antes de o arquivo crescer de novo.`,
  hostClockUnknown: ({ host, roundTripMs, boundMs, watching }) =>
    `o relógio do servidor ${host} não pôde ser medido contra o banco de dados do diário: cada leitura levou uns ${roundTripMs} ms, tempo demais para saber se está dentro de maxClockSkew (${Math.round(boundMs / 1000)} s): ele não paga nada até uma leitura dizer. Verifique a rede e a carga entre este servidor e o banco; depois ${watching ? 'ele continua sozinho' : 'execute de novo'}`,
  journalCompactTables: ({ tablesBefore, auditBefore, tablesAfter, auditAfter, vacuumed }) =>
    `Tabelas do diário ${bytes(tablesBefore)} (auditoria ${bytes(auditBefore)}) antes, ${bytes(tablesAfter)} (auditoria ${bytes(auditAfter)}) depois, por pg_total_relation_size; ${vacuumed ? 'o VACUUM deixou o espaço das linhas tiradas reutilizável: novos pagamentos o preenchem antes de as tabelas crescerem de novo' : 'o VACUUM não pôde rodar agora: o autovacuum deixa o espaço das linhas tiradas reutilizável depois'}. VACUUM FULL audit o devolve ao disco, mas trava a tabela: só com nenhum processo do payouts rodando.`,
  historyMoved: ({ archive }) => `histórico tirado do diário para ${archive}`,
  fourEyesWaits: ({
    file,
    dropper,
    approvers,
    approvalCode,
    approvedBy,
    needed,
    second,
    hintFlags,
  }) =>
    `nada dele é enviado até que ${needed === 2 ? 'dois aprovadores' : 'um aprovador'} (${approvers.join(', ') || 'ninguém além de quem o enviou'}; não ${dropper}, que o enviou) ${needed === 2 ? 'deixem' : 'deixe'} em awaiting-approval/ um arquivo ${file}.aprovado (ou ${file}.SEUNOME.aprovado) com o código de aprovação ${approvalCode}, ou ${needed === 2 ? 'executem' : 'execute'} com o próprio usuário: payouts approve "${file}"${hintFlags}; mover o arquivo para approved/ não libera nada${
      approvedBy.length > 0 ? `; aprovado até agora por ${approvedBy.join(' e ')}` : ''
    }${
      second === null
        ? ''
        : second.rule === 'above'
          ? `; dois aprovadores: o total, ${formatCents(second.cents)}, passa de secondApprovalAbove (${formatCents(second.limit)})`
          : `; dois aprovadores: com ${formatCents(second.cents)} aprovados hoje, ele passaria de dailyLimit (${formatCents(second.limit)})`
    }`,
  fourEyesNoApprovers: ({ file }) =>
    `${file}: nada dele é liberado: fourEyes está ligado e a configuração approvers não nomeia ninguém; defina-a no arquivo de configuração (PAYOUTS_APPROVERS=ana,bruno,@financeiro)`,
  fourEyesRefused: ({ file, owner, rule, dropper, approvers }) =>
    `${file} (de ${owner}) não libera nada: ${
      {
        'not-a-file': 'não é um arquivo comum de até 4 KB',
        writable: 'outros além do dono podem alterá-lo (grave-o com modo 0640 ou 0600)',
        service: 'é do serviço ou do root: aprovações são feitas por pessoas com o próprio usuário',
        dropper: `${dropper} enviou o arquivo e não pode aprová-lo`,
        'not-approver': `${owner} não está na configuração approvers`,
        'other-code':
          'não tem o código de aprovação do arquivo como ele está agora (veja o .report.txt)',
        'changed-file':
          'o arquivo mudou depois do relatório: nenhuma aprovação o libera; envie-o de novo como um arquivo novo',
        linked:
          'ele tem outros nomes (links físicos), e pode ser a aprovação de outra pessoa: uma aprovação é um arquivo próprio, gravado por quem aprova',
      }[rule]
    }; quem pode aprovar: ${approvers.join(', ') || 'ninguém ainda (defina approvers)'}`,
  fourEyesMovedBack: ({ file }) =>
    `${file}: movido à mão para approved/, o que, com quatro olhos, não diz quem liberou: voltou para awaiting-approval/; o .report.txt diz como aprová-lo`,
  fourEyesCode: ({ approvalCode, batchId, count, cents }) =>
    `Código de aprovação: ${approvalCode} (lote ${batchId}: ${pagamentos(count)}, ${formatCents(cents)}, exatamente este arquivo)`,
  eventFourEyesApproved: ({ approvalCode, count, cents, needed, via }) =>
    `código de aprovação ${approvalCode}: ${pagamentos(count)}, ${formatCents(cents)} (${via}; ${needed === 2 ? 'dois aprovadores exigidos' : 'um aprovador exigido'})`,
  eventDropped: ({ uid }) => `enviado para inbox/ (uid ${uid})`,
  fourEyesByService: ({ user }) =>
    `payouts approve: aprovações são feitas por pessoas com o próprio usuário, nunca como ${user}: cada aprovador executa payouts approve com o seu usuário, ou deixa ARQUIVO.aprovado com o código de aprovação em awaiting-approval/. Nada foi aprovado.`,
  fourEyesApprovalWritten: ({ file, approvalFile, approvalCode, by, rejects }) =>
    `${file}: a sua ${rejects ? 'recusa' : 'aprovação'}, como ${by}, está em awaiting-approval/${approvalFile}, com o código de aprovação ${approvalCode}; o serviço a considera na próxima execução`,
  fourEyesNoCode: ({ file }) =>
    `payouts approve: ${file}.report.txt ainda não tem código de aprovação: espere a próxima execução do serviço e aprove de novo. Nada foi aprovado.`,
  fourEyesReleased: ({ file, approvedBy, approvalCode }) =>
    `${file}: aprovado por ${approvedBy.join(' e ')} (código de aprovação ${approvalCode}); é enviado agora`,
  fourEyesChanged: ({ file, approvalCode, hintFlags }) =>
    `${file} mudou depois do relatório: o que ele tem agora nunca foi conferido, e nenhuma aprovação o libera (o código de aprovação ${approvalCode} é do arquivo como foi relatado). Envie o arquivo corrigido para a caixa de entrada de novo: ele é conferido e relatado outra vez, com um novo código de aprovação a aprovar; depois recuse este (deixe ${file}.rejeitado, ou payouts reject "${file}" --reason "motivo"${hintFlags}). Ou ponha de volta o arquivo como foi relatado`,
  fourEyesDecisionExists: ({ file, approvalFile, rejects }) =>
    `payouts ${rejects ? 'reject' : 'approve'}: awaiting-approval/${approvalFile} já existe: a sua ${rejects ? 'recusa' : 'aprovação'} de ${file} foi deixada antes, e nunca é sobrescrita. Para mudá-la, apague esse arquivo e execute de novo. Nada foi gravado.`,
  fourEyesInboxRefused: ({ file, why, links, mode }) =>
    `${file} não foi recebido: com quatro olhos, quem enviou um arquivo é o dono dele, e ${
      {
        link: 'ele é um link simbólico, que pode apontar para o arquivo de qualquer um: copie o próprio arquivo para a caixa de entrada',
        'not-a-file': 'ele não é um arquivo comum: copie o próprio arquivo para a caixa de entrada',
        linked: `ele tem ${links} nomes (links físicos), e pode ser o arquivo de outra pessoa: copie-o para a caixa de entrada como um arquivo próprio (cp, não ln)`,
        writable: `outros além do dono podem alterá-lo (modo ${mode}): chmod 640 "${file}", ou grave-o por um compartilhamento com create mask 0640`,
      }[why]
    }. Ele fica na caixa de entrada, e é recebido na execução seguinte`,
  fourEyesNotAsDropped: ({ file }) =>
    `${file}: o arquivo lido não é aquele cujo dono foi conferido na caixa de entrada (foi trocado enquanto era recebido): nada dele é enviado; envie-o de novo`,
  fourEyesAnswerReleased: ({ file, batchId, dropper, approvers }) =>
    `payouts approve: ${file} (lote ${batchId}) já foi liberado pelos aprovadores; com quatro olhos, as linhas retidas dele só são enviadas quando aprovadores as liberam, e a resposta de mais ninguém as solta (${dropper} o deixou na entrada). Responda enquanto um arquivo espera em awaiting-approval/, antes de os aprovadores o liberarem, ou deixe essas linhas de novo num arquivo novo, que espera por eles. Quem pode aprovar: ${approvers.join(', ') || 'ninguém ainda (defina approvers)'}. Nada foi liberado.`,
  fourEyesDropped: ({ file, dropper }) =>
    `payouts approve: ${file} foi deixado na entrada com quatro olhos (por ${dropper}): só aprovadores o liberam, cada um com o próprio usuário, deixando ${file}.SEUNOME.aprovado com o código de aprovação do seu .report.txt em awaiting-approval/, ou executando payouts approve como eles mesmos onde fourEyes está ligado. Nada foi aprovado.`,
  approvalsNone: ({ since }) =>
    `Nenhum arquivo foi aprovado${since === null ? '' : ` desde ${since}`}.`,
  approvalsRelease: ({ batchId, file, droppedBy, approvedBy, approvalCode, state, done }) =>
    `lote ${batchId}  ${file}  deixado por ${droppedBy ?? 'desconhecido'}  aprovado por ${approvedBy.map(({ by, at }) => `${by} em ${at}`).join(', ')}${approvalCode === null ? '' : `  código ${approvalCode}`}  ${state}: ${done}`,
  heldCoverConflict: ({ file, line, orderId, newFile, hintFlags }) =>
    `estava coberta por ${file}, linha ${line} (ID de pagamento ${orderId}), mas o gateway tem outra transação com esse ID (conflito): aquele pagamento pode não ter sido feito, então esta linha não conta como paga e não é enviada. Consulte o gateway: payouts get --order-id ${orderId}${globalFlags(hintFlags)}; se ele não pagou esta pessoa, payouts approve "${newFile}" --new-batch${hintFlags} lista esta linha e só a paga quando você der também a opção --repeats com a contagem listada`,
  retryWhichBatch: ({ file, batches, hintFlags }) =>
    `payouts retry: ${batches.length} arquivos chamados ${file} têm pagamentos a reenviar (${batches.map((batch) => `lote ${batch.batchId}, chegou ${momento(batch.at)}`).join('; ')}): nada é reenviado. Diga qual com --batch e o número dele, como o resumo da execução o dá: payouts retry "${file}" --batch ${batches.at(-1)?.batchId ?? ''}${hintFlags}`,
};

/** The rules that hold a row, as `run --dry-run` and `validate` name them. */
const REGRA: Readonly<Record<string, string>> = {
  'orderId of another file': 'ID de pagamento de outro arquivo',
  'possible duplicate': 'possível duplicata',
  'repeats a failed payout': 'repete um pagamento que falhou',
  'identical rows': 'linhas idênticas',
};

/** `--help` in Portuguese: commander's headings and placeholders, and our commands' words. */
const help: HelpTexts = {
  headings: {
    'Usage:': 'Uso:',
    'Arguments:': 'Argumentos:',
    'Options:': 'Opções:',
    'Global Options:': 'Opções gerais:',
    'Commands:': 'Comandos:',
  },
  placeholders: { '[options]': '[opções]', '[command]': '[comando]' },
  helpOption: 'mostra a ajuda do comando',
  helpCommand: { name: 'help [comando]', description: 'mostra a ajuda de um comando' },
  byDefault: ({ value }) => `(padrão: ${value})`,
  program: {
    description:
      'Pagamentos Pix em lote a partir de planilhas CSV da contabilidade, cada um pago uma única vez.',
    options: {
      version: 'a versão instalada',
      config: 'arquivo JSON de configurações, por cima de config/default.json',
      settingsFile:
        'arquivo de configurações PAYOUTS_*, uma NOME=valor por linha, lido como está escrito (também PAYOUTS_SETTINGS_FILE); o ambiente prevalece sobre ele',
      json: 'saída para programas (JSON) no stdout',
      quiet: 'sem observações no stderr, só os resultados',
      sandbox:
        'usa de propósito o sandbox embutido, onde nenhum dinheiro real é movido (como "gateway": "sandbox")',
    },
  },
  command: {
    validate: {
      description:
        'confere um arquivo de pagamentos sem enviar nada: cada linha, com o que corrigir',
      argument: { name: 'arquivo', description: 'o arquivo CSV a conferir' },
      options: { report: 'grava o relatório linha a linha neste arquivo CSV' },
      after:
        '\nCódigos de saída: 0 todas as linhas são válidas; 2 há linhas a corrigir (ou um total de controle não confere,\n' +
        'ou uma execução seguraria linhas para uma pessoa decidir: pelo diário da pasta, um possível pagamento em dobro, por exemplo);\n' +
        '1 o arquivo não pode ser usado.\n' +
        '\nExemplos:\n  payouts validate samples/fornecedores-2026-11.csv\n' +
        '  payouts validate folha.csv --report folha.relatorio.csv --json',
    },
    template: {
      description:
        'grava um arquivo de pagamentos vazio com todas as colunas que lemos, pronto para preencher no Excel (em ARQUIVO, ou no stdout)',
      argument: {
        name: 'arquivo',
        description: 'onde gravar; um arquivo que já existe nunca é substituído',
      },
      options: {},
      after: '\nExemplo:\n  payouts template pagamentos-2026-12.csv',
    },
    run: {
      description:
        'processa uma vez cada arquivo da caixa de entrada: registra no diário, envia e relata (o comando do cron)',
      options: {
        inbox: 'pega os arquivos desta pasta em vez de <home>/inbox',
        followTimeout:
          'acompanha os pagamentos pendentes por este tempo antes de terminar (por exemplo 30s, 5m; 0: nada); padrão: followTimeout',
        recover:
          'depois de um diário perdido, esvaziado, trocado ou mais antigo: segue, consultando cada pagamento no gateway antes do seu primeiro envio por este diário',
        logTimes:
          'começa cada linha com a hora em que foi escrita (2026-11-27T09:05:01-03:00, no fuso do servidor), para um registro como o run.log do cron; a saída --json fica como está',
        dryRun:
          'lê e avalia cada arquivo à espera e diz o que seria enviado; não muda nem envia nada',
      },
      wait: ({ duration }) =>
        `quando outra execução ou o serviço estiver trabalhando nesta pasta, espera que termine (padrão ${duration}) em vez de desistir na hora`,
      after:
        '\nCódigos de saída: 0 todas as linhas pagas; 2 alguma linha precisa de uma pessoa (inválida, recusada, com falha, retida, em conflito…);\n' +
        '3 nada precisa de uma pessoa, mas alguma linha continua pendente ou incerta (execute de novo mais tarde); 1 a execução falhou.\n' +
        '\nExemplo:\n  PAYOUTS_HOME=/srv/payouts payouts run --json',
    },
    status: {
      description:
        'o que o diário sabe: todos os arquivos, um arquivo linha a linha, ou um pagamento com seu histórico',
      argument: {
        name: 'arquivoOuOrderId',
        description: 'um nome de arquivo (como foi posto na caixa de entrada) ou um orderId',
      },
      options: {
        approvals:
          'as liberações de arquivos, para a auditoria: quem enviou cada um, quem o aprovou e quando, o código de aprovação, o que ele enviou',
        since: 'com --approvals: liberações a partir deste dia (AAAA-MM-DD, no timeZone)',
      },
      after:
        '\nExemplos:\n  payouts status\n  payouts status folha-2026-11.csv\n  payouts status pag-2026-11-001 --json\n  payouts status --approvals --since 2026-11-01',
    },
    watch: {
      description:
        'o serviço: pega cada arquivo que assenta na caixa de entrada, paga-o uma única vez, acompanha até o fim e grava os resultados; até SIGINT/SIGTERM',
      options: { inbox: 'pega os arquivos desta pasta em vez de <home>/inbox' },
      after:
        '\nOs arquivos presentes ao iniciar (e os deixados em processing/ por um processo que morreu) vêm primeiro.\n' +
        'SIGINT/SIGTERM: nenhum arquivo ou pagamento novo; os pedidos em curso têm 2 s para terminar e ficam no diário; saída 0.\n' +
        'SIGUSR2: uma linha de saúde no stderr, na hora.\n' +
        '\nExemplo:\n  PAYOUTS_HOME=/srv/payouts PAYOUTS_POSTBACK_LISTEN=127.0.0.1:8787 payouts watch',
    },
    approve: {
      description:
        'libera um arquivo à espera de aprovação, ou responde por linhas retidas pelas regras de quem é pago: pagamentos novos (--new-batch), ou cópia corrigida de um lote anterior (--corrects)',
      argument: {
        name: 'arquivo',
        description: 'o nome do arquivo em awaiting-approval/, ou como o resumo o chama',
      },
      options: {
        newBatch:
          'suas linhas retidas como possíveis pagamentos em dobro, retidas porque o arquivo tem o nome de um lote anterior, ou retidas por chave Pix ou nome mudados numa cópia corrigida, são pagamentos novos: envia-as',
        repeats:
          'com --new-batch: suas linhas retidas que repetem um pagamento já feito ou em curso, listadas por --new-batch sozinho, também são devidas; a quantidade delas, como listada',
        rows: 'com --new-batch: só estas linhas do arquivo, como o resumo as lista (2,5,9)',
        except:
          'com --new-batch: todas as linhas retidas do arquivo menos estas (um pagamento em dobro de verdade entre alarmes falsos)',
        identical:
          'suas linhas idênticas a uma linha anterior do mesmo arquivo (mesma pessoa, chave e valor) são ambas devidas: envia-as',
        corrects:
          'é uma cópia corrigida deste lote (seu número no resumo): as linhas que esse lote pagou ficam cobertas, as outras são enviadas, e o que esse lote nunca enviou é encerrado',
        batch:
          'quando vários arquivos com esse nome esperam: o número do lote deste, como o resumo da execução o dá',
        by: 'uma nota ao lado do usuário que executa, que a trilha de auditoria nomeia',
      },
      after:
        '\nExemplos:\n  payouts approve folha-2026-11.csv\n  payouts approve folha.csv --new-batch --by "Maria (financeiro)"\n  payouts approve semanal.csv --new-batch --except 9\n  payouts approve fornecedores.csv --corrects 12',
    },
    reject: {
      description: 'recusa um arquivo à espera de aprovação: nada dele é enviado, nunca',
      argument: { name: 'arquivo', description: 'o nome do arquivo em awaiting-approval/' },
      options: {
        reason: 'por quê; fica guardado ao lado do arquivo em rejected/',
        batch:
          'quando vários arquivos com esse nome esperam: o número do lote deste, como o resumo da execução o dá',
        by: 'uma nota ao lado do usuário que executa, que a trilha de auditoria nomeia',
      },
      after: '\nExemplo:\n  payouts reject folha-2026-11.csv --reason "mês errado"',
    },
    retry: {
      description:
        'envia de novo, de propósito, pagamentos que falharam de vez (com falha, recusados, cancelados, devolvidos): cada linha assim de um arquivo (do lote que --batch indica, quando vários arquivos com esse nome têm alguma), ou um orderId; cada um vai com seu orderId e um sufixo de tentativa (-r2, -r3), enviado pela próxima execução',
      argument: {
        name: 'arquivoOuOrderId',
        description: 'um nome de arquivo como o resumo o chama, ou um orderId',
      },
      options: {
        by: 'quem pede, para a trilha de auditoria (padrão: o usuário que executa)',
        batch:
          'quando vários arquivos com esse nome têm pagamentos a reenviar: o número do lote deste, como o resumo da execução o dá',
      },
      after:
        '\nExemplos:\n  payouts retry folha.csv --by "Maria (financeiro)"\n  payouts retry folha.csv --batch 2\n  payouts retry folha-1-3f9a2c71',
    },
    reconcile: {
      description:
        'consulta de novo no gateway os pagamentos pagos recentes: registra os que voltaram (devolvidos) e regrava seus arquivos de resultado',
      options: { days: 'pagamentos enviados nos últimos n dias' },
      after:
        '\nCódigos de saída: 0 nada voltou; 2 algum pagamento voltou ou agora consta de outro jeito (uma pessoa deve olhar); 1 falhou.\n' +
        '\nExemplo:\n  payouts reconcile --days 7',
    },
    doctor: {
      description:
        'confere se esta máquina está pronta para pagar: configuração, gateway e token, pasta de trabalho e suas permissões, diário; não muda nada',
      options: {},
      after:
        '\nSaída 0 quando todas as verificações passam, 1 quando alguma não passa (cada uma diz o que fazer).\n\nExemplo:\n  PAYOUTS_HOME=/srv/payouts payouts doctor',
    },
    sandbox: {
      description:
        'executa o simulador do gateway como servidor HTTP (até Ctrl-C); nenhum dinheiro real é movido',
      options: {
        host: 'endereço em que escutar',
        port: 'porta em que escutar; 0 escolhe uma livre',
        settleDelay: 'tempo da criação até cada status seguinte',
        balance: 'saldo inicial em centavos',
        seed: 'semente do sorteio das falhas',
        latency: 'atraso somado a cada resposta, por exemplo 50ms ou 10ms-200ms',
        errorRate: 'fração dos pedidos respondidos com 500 antes de criar qualquer coisa',
        errorAfterCommitRate:
          'fração das criações respondidas com 502 depois de criada a transação',
        rateLimitRate: 'fração dos pedidos respondidos com 429',
        retryAfter: 'Retry-After enviado com cada 429',
        hangRate: 'fração dos pedidos nunca respondidos',
        dropRate: 'fração das criações cuja conexão é cortada depois de criada a transação',
        dedupe:
          'responde a um orderId de saque repetido com a transação existente (padrão: paga de novo)',
      },
      after:
        '\nO token é PAYOUTS_TOKEN (ou "token" no --config); sem ele, o padrão público "sandbox-token".\n' +
        'Chaves de e-mail fail@…, cancel@… e refund@… terminam com falha, cancelada, e paga e depois devolvida.\n' +
        '\nExemplo:\n  payouts sandbox --port 8080 --latency 50ms --drop-rate 0.05 --seed 7\n' +
        '  curl -H "Authorization: sandbox-token" http://127.0.0.1:8080/transaction/get/balance',
    },
    balance: {
      description: 'mostra o saldo da conta, pelo endpoint de saldo do gateway',
      options: {},
      after: '\nExemplo:\n  payouts balance --json',
    },
    get: {
      description: 'consulta uma transação no gateway, pelo seu transactionId ou pelo seu orderId',
      options: { id: 'o id da transação no gateway', orderId: 'o seu identificador do pedido' },
      after:
        '\nExemplos:\n  payouts get --id 1001\n  payouts get --order-id folha-2026-11-0001 --json',
    },
    cashin: {
      description:
        'cria uma cobrança (pedido de pagamento): mostra o código Pix copia e cola e grava a imagem do QR',
      options: {
        value: 'valor em centavos (1234 é R$ 12,34)',
        payerName: 'quem paga',
        payerDocument: 'o CPF ou CNPJ de quem paga',
        payerEmail: 'o e-mail de quem paga',
        payerPhone: 'o telefone de quem paga',
        productName: 'o que está sendo pago',
        productDescription: 'uma descrição mais longa',
        orderId: 'a sua referência, devolvida pelo gateway',
        postbackUrl: 'onde o gateway deve informar o resultado',
        qrOut: 'onde gravar a imagem do QR (padrão: cashin-<transactionId>.png)',
      },
      after:
        '\nExemplo:\n  payouts cashin --value 1500 --payer-name "Ana Souza" --payer-document 52998224725 \\\n' +
        '    --payer-email ana@example.com --payer-phone +5511987654321 \\\n' +
        '    --product-name "Fatura 42" --product-description "Serviços de novembro" --qr-out fatura-42.png',
    },
    demo: {
      description:
        'a jornada inteira contra um sandbox embutido com falhas ligadas: os arquivos de exemplo pagos uma única vez, acompanhados até o fim, resultados gravados',
      options: {},
      after:
        '\nNenhum dinheiro real é movido. Cada demonstração tem uma pasta de trabalho nova em <home>/demo/.\n' +
        '\nExemplo:\n  npm start        # o mesmo que: payouts demo',
    },
    journal: {
      description:
        'o diário da pasta: copiá-lo para o PostgreSQL, ou tirar dele o histórico antigo',
      after: '\nExemplo:\n  payouts journal copy --to postgres://payouts@db.interno:5432/payouts',
      copy: {
        description:
          'copia o diário SQLite desta pasta para um banco PostgreSQL vazio, exatamente, numa só transação; compara linhas e somas por estado e por lote; o diário SQLite é só lido (atualizado antes, como por qualquer comando)',
        options: { to: 'a URL do banco PostgreSQL vazio (postgres://…)' },
        after:
          '\nPare antes o serviço e as execuções do cron: uma execução que trava a pasta é recusada, e também um banco que não está vazio.\nDepois da cópia, todo comando recusa o diário SQLite: defina journal (PAYOUTS_JOURNAL) com a URL em cada servidor.\nSaída 0 copiado, 1 nada escrito (cada uma diz por quê).\n' +
          '\nExemplo:\n  payouts journal copy --to postgres://payouts@db.interno:5432/payouts',
      },
      compact: {
        description:
          'tira do diário o histórico (registros de auditoria) dos lotes terminados recebidos antes de um dia, para um CSV datado em archive/journal-history/, e depois consolida (SQLite) ou faz VACUUM (PostgreSQL) no diário; cada ID de pagamento e tudo o que as regras de quem é pago leem ficam',
        options: {
          before:
            'o dia (AAAA-MM-DD, como os nomes dos arquivos de resultado datam os lotes): lotes recebidos antes dele',
        },
        after:
          '\nSeguro com o serviço rodando (o diário é escrito em transações curtas) e seguro para interromper e rodar de novo. payouts status ID_DO_PAGAMENTO depois diz o arquivo em archive/journal-history/ que guarda o histórico de um pagamento.\nSaída 0 feito ou nada a fazer, 1 não feito (diz por quê), 64 um dia que não pode ser aceito.\n' +
          '\nExemplo:\n  payouts journal compact --before 2026-06-01',
      },
    },
  },
  expected: {
    count: 'Esperava a quantidade de repetições listadas, por exemplo 3.',
    batch: 'Esperava um número de lote, por exemplo 12.',
    lines: 'Esperava números de linha, por exemplo 2,5,9.',
    reason: 'Diga por que o arquivo é recusado.',
    days: ({ value }) => `Esperava um número inteiro de dias, a partir de 1; veio "${value}".`,
    day: ({ value }) => `Esperava um dia como AAAA-MM-DD, por exemplo 2026-06-01; veio "${value}".`,
    pastDay: ({ value, today }) =>
      `Esperava um dia até hoje (${today}); veio ${value}: só sai o histórico dos lotes recebidos antes dele.`,
  },
  usage: {
    sayWhichCommand: 'diga qual comando, por exemplo payouts validate ARQUIVO ou payouts run',
    sayWhichTransaction: 'diga qual transação, com --id N ou --order-id X',
    notADuration: ({ flag, text }) =>
      `${flag} "${text}" não é uma duração (por exemplo 0, 30s, 5m)`,
    seeHelp: ({ help }) => `(veja ${help})`,
    didYouMean: ({ suggestion }) => `; você quis dizer ${suggestion}`,
    unknownCommand: ({ name }) => `comando desconhecido '${name}'`,
    unknownOption: ({ option }) => `opção desconhecida '${option}'`,
    missingArgument: ({ name }) => `falta o argumento '${name}'`,
    optionMissingArgument: ({ option }) => `falta o valor da opção '${option}'`,
    missingMandatoryOptionValue: ({ option }) => `falta a opção obrigatória '${option}'`,
    excessArguments: ({ expected, got }) =>
      `argumentos demais: esperava ${many(expected, 'argumento', 'argumentos')}, vieram ${got}`,
    invalidArgument: ({ option, value, why }) =>
      `o valor '${value}' da opção '${option}' não serve. ${why}`,
    conflictingOption: ({ option, other }) =>
      `a opção '${option}' não pode ser usada com a opção '${other}'`,
  },
};

export const ptBR: Catalog = {
  help,
  said,
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
    droppedBy: 'Enviado por',
    approvedBy: 'Aprovado por',
  },
  state: ESTADOS,
  outcome: ({ state }) =>
    ({
      archived: 'todas as linhas concluídas: arquivado em archive/',
      final: 'todas as linhas concluídas',
      taken: 'recebido',
      resumed: 'retomado',
      held: 'retido: nada enviado',
      retried: 'reenviado de propósito (payouts retry)',
      'waiting-retry': 'linhas aguardam payouts retry: um pagamento que elas repetem não pagou',
      'awaiting-approval': 'aguardando aprovação em awaiting-approval/',
      'cut-short': 'leitura interrompida',
      replaced: 'substituído',
      unusable: 'não pode ser usado',
      waiting: 'deixado na entrada para a próxima execução',
      skipped: 'ignorado: não é um arquivo de pagamentos',
    })[state],
  sandboxMoved: 'SANDBOX: nenhum dinheiro real foi movido',
  sandboxRun:
    'SANDBOX: nenhum dinheiro real foi movido: estes pagamentos foram para o sandbox embutido',
  inboxEmpty: 'A entrada está vazia: nada a fazer.',
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
  attemptsRetried: ({ count }) =>
    count === 1
      ? '1 tentativa que não pagou, reenviada'
      : `${count} tentativas que não pagaram, reenviadas`,
  noRows: 'nenhuma linha',
  fileSummary: ({ file, batchId, outcome, totals, total }) =>
    `${file}${batchId === null ? '' : ` (lote ${batchId})`}: ${outcome}; ${totals}; total das linhas válidas ${total}`,
  resultAt: ({ path }) => `resultado: ${path}`,
  atLineColumn: ({ line, column, message }) =>
    `linha ${line}${column === null ? '' : `, coluna ${column}`}: ${message}`,
  invalidRowsTitle:
    'Linhas inválidas (corrija-as e envie o arquivo de novo; as linhas válidas não esperam por elas):',
  warningsTitle: 'Avisos (a linha é válida; confira se foi lida como queria):',
  andMore: ({ count, report }) =>
    `… e mais ${count}${report ? '' : ' (todas com --report ARQUIVO)'}`,
  fileHeld: ({ message }) => `Retido, nada deste arquivo será pago: ${message}`,
  wouldHold: ({ note }) => `Uma execução o reteria para uma pessoa decidir: ${note}`,
  heldByRulesTitle: ({ journal }) =>
    `Retidas para uma pessoa decidir, pelas regras de quem é pago (contra o diário ${journal}):`,
  weighedAgainstView: ({ at, timeZone }) =>
    `Conferido com o que o serviço viu às ${horaEDia(at, timeZone)}: o diário é só do serviço, que grava esta cópia para o grupo após cada execução que o muda.`,
  notWeighed: ({ journal }) =>
    `Não conferido com o diário ${journal}: ele é só do serviço, que ainda não gravou a cópia que o grupo lê (grava após cada execução, com sharedGroup definido). Uma execução ainda pode reter linhas deste arquivo que repetem pagamentos anteriores.`,
  heldRow: ({ line, rule, message }) => `linha ${line} (${REGRA[rule] ?? rule}): ${message}`,
  andMoreHeld: ({ count, hintFlags }) =>
    `… e mais ${count} (payouts run --dry-run --json${hintFlags} lista todas)`,
  skipped: ({ lines }) =>
    `Ignoradas: ${lines.map(({ line, reason }) => `linha ${line} (${reason})`).join(', ')}`,
  nothingPayable: 'Nada nele pode ser pago: corrija o arquivo e confira-o de novo.',
  contactsFilled: ({ contact, fromKey, fromSetting, setting, value }) =>
    `${contact === 'email' ? 'e-mail' : 'telefone'}: não está no arquivo em ${many(fromKey + fromSetting, 'linha', 'linhas')}: ${[
      fromKey > 0 ? `${fromKey} da chave Pix` : '',
      fromSetting > 0 ? `${fromSetting} de ${setting} (${value})` : '',
    ]
      .filter(Boolean)
      .join(', ')}`,
  readByHeadings: ({ columns }) =>
    `lidas pela configuração headings: ${columns.map((c) => `"${c.heading}" como ${c.as}`).join(', ')}`,
  columnsNotUsed: ({ headings }) =>
    `colunas não usadas: ${headings.map((heading) => `"${heading}"`).join(', ')}`,
  readsReference: ({ column }) =>
    `referência de cada linha da coluna "${column}": um pagamento com o mesmo documento e referência de um anterior é retido, qualquer que seja a idade; uma referência nova é um pagamento novo, mesmo de igual valor (um mês, como uma competência, junto com o valor)`,
  reportAt: ({ path }) => `Relatório: ${path}`,
  release: {
    repeatsTitle: ({ count }) =>
      `${count === 1 ? '1 linha retida repete' : `${count} linhas retidas repetem`} um pagamento já feito ou em andamento (o mesmo documento e valor):`,
    repeat: ({ line, name, amount, file, fileLine, at, state }) =>
      `linha ${line}: ${name}, ${amount}: repete ${file}, linha ${fileLine}, registrada no diário ${momento(at)} (agora ${state})`,
    released: ({ file, batchId, count, amount, by }) =>
      `${file} (lote ${batchId}): ${count === 1 ? '1 pagamento' : `${count} pagamentos`}, ${amount}, ${count === 1 ? 'liberado' : 'liberados'} por ${by} como pagamentos novos; a próxima execução os envia.`,
    repeatsStayHeld: ({ count }) =>
      `${count === 1 ? 'Essa linha continua retida' : `Essas ${count} linhas continuam retidas`}. Se ${count === 1 ? 'ela é devida' : 'cada uma é devida'} de novo, diga isso: o mesmo comando com a opção --repeats e a contagem delas, ${count}.`,
    repeatsReleased: ({ count }) =>
      `${count === 1 ? 'Essa linha também foi liberada' : `Essas ${count} linhas também foram liberadas`}, como você disse (--repeats ${count}): ${count === 1 ? 'é paga' : 'são pagas'} de novo.`,
    rowsNotHeld: ({ notHeld }) =>
      `payouts approve: ${notHeld.length === 1 ? `a linha ${notHeld[0]} não está retida` : `as linhas ${notHeld.join(', ')} não estão retidas`} como possível duplicata nem pelo nome do arquivo: nada foi liberado; o resumo da execução lista as linhas retidas`,
    notACopy: ({ batchId, batchFile, file, candidates }) =>
      `payouts approve: o lote ${batchId} (${batchFile}) não é um arquivo que ${file} repete: uma cópia corrigida corrige um arquivo do mesmo nome ou um cujos pagamentos ela repete (aqui ${candidates.map((c) => `lote ${c.batchId}, ${c.file}`).join('; ') || 'nenhum'}). Nada mudou.`,
    whichBatch: ({ verb, file, batches, hintFlags }) =>
      `payouts ${verb}: ${batches.length} arquivos chamados ${file} esperam uma resposta (${batches.map((batch) => `lote ${batch.batchId}, chegou ${momento(batch.at)}`).join('; ')}): nada mudou. Diga qual com --batch e o número dele, como o resumo da execução o dá: payouts ${verb} "${file}" --batch ${batches.at(-1)?.batchId ?? ''}${hintFlags} e as mesmas opções`,
    alreadyApproved: ({ verb, file, batchId, by, at, totals }) =>
      `payouts ${verb}: ${file} (lote ${batchId}) foi aprovado por ${by} ${momento(at)}: ${totals}; nada mudou`,
    stillAwaiting: ({ file, hintFlags }) =>
      `${file} continua aguardando aprovação: nada dele é enviado até uma pessoa aprovar o resto dele: payouts approve "${file}"${hintFlags}`,
    stayHeld: ({ count }) =>
      `${count === 1 ? '1 linha continua retida' : `${count} linhas continuam retidas`}:`,
    heldRow: ({ line, name, amount, message }) => `linha ${line}: ${name}, ${amount}: ${message}`,
    retryHeld: ({ count }) =>
      `${count === 1 ? '1 pagamento reenviado ficou retido' : `${count} pagamentos reenviados ficaram retidos`}, não ${count === 1 ? 'enviado' : 'enviados'}: outro arquivo já pagou essa pessoa e esse valor desde então:`,
    repeatsDiffer: ({ given, count }) =>
      `payouts approve: --repeats ${given} não é a contagem de linhas retidas que repetem um pagamento (${count}, listadas acima): nada foi liberado; confira-as e dê a contagem delas`,
  },
  approval: {
    sandbox: 'SANDBOX: nenhum dinheiro real se move: este arquivo passou pelo sandbox embutido',
    waiting: ({ file, batchId }) =>
      `${file} (lote ${batchId}): aguardando aprovação; nada dele é enviado até lá`,
    onceApproved: ({ count, amount }) =>
      `Depois de aprovado, ${count === 1 ? 'é enviado 1 pagamento' : `são enviados ${count} pagamentos`}, ${amount} ao todo.`,
    notSent: ({ invalid, held, covered }) =>
      `Não enviadas: ${many(invalid, 'linha inválida', 'linhas inválidas')}, ${many(held, 'linha retida', 'linhas retidas')} pelas regras de quem é pago, ${many(covered, 'já coberta', 'já cobertas')} por pagamentos já feitos.`,
    heldByRule: ({ rows, amount, example }) =>
      `${many(rows, 'retida', 'retidas')} (${amount})${example === null ? '' : `, por exemplo: ${example}`}`,
    atLine: ({ line, column, message }) =>
      `linha ${line}${column === null ? '' : `, ${column}`}: ${message}`,
    more: '… (o arquivo de resultado traz todas)',
    toApprove: ({ file, inFolder, hintFlags }) =>
      `Para aprovar: mova ${inFolder} para approved/, ou execute: payouts approve "${file}"${hintFlags}`,
    answerApproves: ({ file, hintFlags }) =>
      `Uma resposta às linhas retidas dele também o aprova, quando libera uma linha: payouts approve "${file}"${hintFlags} com --new-batch, --corrects ou --identical, como as linhas acima e o resumo da execução a dão`,
    toReject: ({ file, hintFlags }) =>
      `Para recusar: payouts reject "${file}" --reason "motivo"${hintFlags}`,
    payeesTitle:
      'Todos os pagamentos do arquivo (documentos e chaves mascarados), e o que acontece com cada um:',
    payee: ({ line, name, document, key, amount, state, message }) =>
      `linha ${line}: ${name}, documento ${document}, chave Pix ${key}, ${amount}: ${
        state === null ? 'a enviar' : `${state}${message === null ? '' : ` (${message})`}`
      }`,
  },
  approvedByCell: ({ approvals, code }) =>
    `${approvals.map(({ by, at }) => `${by} ${at}`).join('; ')}${code === null ? '' : ` (código ${code})`}`,
  movedIntoApproved: 'alguém (movido para approved/)',
  journalUnreachable: ({ journal, cause }) =>
    `Não conferido com o diário: o banco ${journal} não responde (${cause}). As conferências do próprio arquivo acima valem, mas não se sabe se uma execução reteria linhas dele (um orderId já pago, uma possível duplicata, a repetição de um pagamento que falhou). Confira se o servidor PostgreSQL está no ar e acessível deste computador, e se a configuração journal (PAYOUTS_JOURNAL) traz o usuário, a senha e o banco certos; depois rode payouts validate de novo.`,
};
