/** Money as text: the one place cents become reais to be read, by people or by a spreadsheet. */

/** The sign, whole reais and two-digit centavos of an amount in cents. */
function partsOf(cents: number): { sign: string; reais: number; centavos: string } {
  const abs = Math.abs(cents);
  return {
    sign: cents < 0 ? '-' : '',
    reais: Math.trunc(abs / 100),
    centavos: String(abs % 100).padStart(2, '0'),
  };
}

/** `R$ 1.234,56`: how amounts are shown to people. */
export function formatCents(cents: number): string {
  const { sign, reais, centavos } = partsOf(cents);
  return `${sign}R$ ${reais.toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${centavos}`;
}

/** Cents as reais with a decimal separator and no thousands: `1234,56` or `1234.56`. */
export function reaisWith(cents: number, separator: string): string {
  const { sign, reais, centavos } = partsOf(cents);
  return `${sign}${reais}${separator}${centavos}`;
}
