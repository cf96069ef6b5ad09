/** Money as text: the one place cents become reais to be read, by people or by a spreadsheet. */

/** `R$ 1.234,56`: how amounts are shown to people. */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const reais = Math.trunc(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}R$ ${reais},${String(abs % 100).padStart(2, '0')}`;
}

/** Cents as reais with a decimal separator and no thousands: `1234,56` or `1234.56`. */
export function reaisWith(cents: number, separator: string): string {
  return `${Math.trunc(cents / 100)}${separator}${String(cents % 100).padStart(2, '0')}`;
}
