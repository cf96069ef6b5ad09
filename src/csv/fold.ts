/**
 * Folding text the way people mean it: `Valor (R$)`, `VALOR` and `valor` are one word,
 * `Tipo de Chave` and `tipo-de-chave` one phrase, `João` and `Joao` one name.
 */

const COMBINING_MARKS = /[\u0300-\u036f]/g;
const ASCII = /^[\x00-\x7f]*$/;

// Latin-1 letters U+00C0..U+00FF without their accents, as NFD then dropping the marks
// gives them (Æ, Ð, Ø, Þ, ß, × and ÷ have no accent to drop): Portuguese text needs no more.
const LATIN1_BASE = [...'AAAAAAÆCEEEEIIIIÐNOOOOO×ØUUUUYÞß', ...'aaaaaaæceeeeiiiiðnooooo÷øuuuuyþy'];
const LATIN1_LETTER = /[\u00c0-\u00ff]/g;

/** Lower case, no accents, single spaces, trimmed. */
export function foldText(text: string): string {
  // Most cells are ASCII, and nearly all the rest Latin-1: full decomposition is for others.
  let plain = ASCII.test(text)
    ? text
    : text.replace(LATIN1_LETTER, (c) => LATIN1_BASE[c.charCodeAt(0) - 0xc0] ?? c);
  if (!ASCII.test(plain)) plain = text.normalize('NFD').replace(COMBINING_MARKS, '');
  return plain.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * A column heading reduced to letters and digits: accents, case, a unit in parentheses,
 * punctuation and spacing dropped (`Valor (R$)` -> `valor`, `CPF/CNPJ` -> `cpfcnpj`,
 * `E-mail` -> `email`, `Valor R$` -> `valorrs`, `orderId` -> `orderid`).
 */
export function foldHeading(heading: string): string {
  return foldText(heading)
    .replace(/\([^)]*\)/g, ' ')
    .replace(/r\$/g, 'rs')
    .replace(/[^a-z0-9]/g, '');
}

/** Characters no cell of a payout file should hold: controls (NUL among them) but tab and line breaks. */
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
