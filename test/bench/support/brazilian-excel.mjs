// The generated payout file of the reading benchmarks (csv-validate, ingest): Brazilian
// Excel style (`;`, CRLF, `R$ 1.234,56`, accents), no orderId column, so every orderId
// is derived; about 117 bytes a row.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { withCheckDigits } from '../../../dist/domain/check-digits.js';

const NAMES = [
  'Ana Souza',
  'João Conceição',
  'Maria das Graças',
  'Açougue São Jorge Ltda',
  'Bruno Lima',
  'Zoë Araújo',
];

/**
 * Writes `rows` valid payout rows under their header to `path`; with `quoted`, every name
 * between double quotes, as a spreadsheet quotes a cell that holds the delimiter: a file
 * with a quote anywhere is read by csv-parse, one without is split at its delimiter.
 */
export async function writePayoutFile(path, rows, { quoted = false } = {}) {
  const out = createWriteStream(path);
  const write = async (text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('Favorecido;CPF/CNPJ;E-mail;Celular;Tipo de Chave;Chave PIX;Valor (R$)\r\n');
  for (let i = 0; i < rows; i++) {
    const cpf = withCheckDigits(String(100_000_000 + i * 7).slice(0, 9));
    const doc = `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
    const cents = 10_000 + ((i * 7919) % 900_000);
    const reais = `${Math.trunc(cents / 100)
      .toString()
      .replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${String(cents % 100).padStart(2, '0')}`;
    const name = quoted ? `"${NAMES[i % NAMES.length]} ${i}"` : `${NAMES[i % NAMES.length]} ${i}`;
    const key = i % 3 === 0 ? `pessoa${i}@example.com` : doc;
    const type = i % 3 === 0 ? 'E-mail' : 'CPF';
    await write(
      `${name};${doc};pessoa${i}@example.com;(11) 9${String(8000_0000 + (i % 9999_9999)).slice(0, 8)};${type};${key};R$ ${reais}\r\n`,
    );
  }
  out.end();
  await once(out, 'finish');
}
