/**
 * Cells we write for spreadsheets must never run as formulas: a cell starting with
 * = + - @ (or a tab or carriage return before one) gets a leading apostrophe, which
 * spreadsheets show as text and never evaluate.
 */
export function safeCell(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
