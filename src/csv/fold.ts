/**
 * Folding text the way people mean it: `Valor (R$)`, `VALOR` and `valor` are one word,
 * `Tipo de Chave` and `tipo-de-chave` one phrase, `João` and `Joao` one name.
 */

const COMBINING_MARKS = /[\u0300-\u036f]/g;

/** Lower case, no accents, single spaces, trimmed. */
export function foldText(text: string): string {
  return text
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
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
