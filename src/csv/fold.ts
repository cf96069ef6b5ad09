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

/**
 * Each Latin-1 letter that folds to a plain ASCII letter (À to a, ç to c), by code: the
 * accented letters of a name, folded without a regex. The others (Æ, ß, ×) are undefined.
 */
const ACCENTED_TO_ASCII: readonly (string | undefined)[] = LATIN1_BASE.map((base) => {
  const lower = base.toLowerCase();
  return lower.charCodeAt(0) < 0x80 ? lower : undefined;
});

/** Lower case, no accents, single spaces, trimmed. */
export function foldText(text: string): string {
  return foldPlainly(text) ?? foldGenerally(text);
}

/**
 * A name or a heading is nearly always ASCII and accented Latin-1 letters, its words one
 * space apart: folded by a look at each character, at a quarter of the regexes' cost (a
 * name on every row). Anything else (another space, ß, a letter outside Latin-1) is
 * undefined, for the general path.
 */
function foldPlainly(text: string): string | undefined {
  const last = text.length - 1;
  let accented = false;
  for (let at = 0; at <= last; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x80) {
      // A space only between two other characters; no other space or control.
      if (code <= 32 && !isInnerLoneSpace(text, at)) return undefined;
    } else if (code >= 0xc0 && code <= 0xff && ACCENTED_TO_ASCII[code - 0xc0] !== undefined) {
      accented = true;
    } else return undefined;
  }
  if (!accented) return text.toLowerCase();
  let plain = '';
  let from = 0;
  for (let at = 0; at <= last; at++) {
    const code = text.charCodeAt(at);
    if (code < 0xc0) continue;
    plain += text.slice(from, at) + (ACCENTED_TO_ASCII[code - 0xc0] ?? '');
    from = at + 1;
  }
  return (plain + text.slice(from)).toLowerCase();
}

/** A space with another character on either side that is not a space. */
function isInnerLoneSpace(text: string, at: number): boolean {
  return (
    text.charCodeAt(at) === 32 && at > 0 && at < text.length - 1 && text.charCodeAt(at + 1) !== 32
  );
}

function foldGenerally(text: string): string {
  // Nearly all cells are Latin-1: full decomposition is for the others.
  let plain = ASCII.test(text)
    ? text
    : text.replace(LATIN1_LETTER, (c) => LATIN1_BASE[c.charCodeAt(0) - 0xc0] ?? c);
  if (!ASCII.test(plain)) plain = text.normalize('NFD').replace(COMBINING_MARKS, '');
  return plain.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Each run of white space one space, and none at either end: `text.replace(/\s+/g, ' ').trim()`. */
export function singleSpaced(text: string): string {
  return isSingleSpaced(text) ? text : text.replace(/\s+/g, ' ').trim();
}

/**
 * Whether `text` is single-spaced already, as a name nearly always is: told by a look at
 * each character, where the regex's replace built a new name on every row. A character
 * that might be white space outside ASCII (U+0080 to U+00BF, U+1680 to U+3000, U+FEFF)
 * answers false, for the regex to decide.
 */
function isSingleSpaced(text: string): boolean {
  const last = text.length - 1;
  for (let at = 0; at <= last; at++) {
    const code = text.charCodeAt(at);
    if (code <= 32) {
      if (!isInnerLoneSpace(text, at)) return false;
    } else if (
      code >= 0x80 &&
      (code < 0xc0 || (code >= 0x1680 && code <= 0x3000) || code === 0xfeff)
    )
      return false;
  }
  return true;
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
