/** Payroll files for end-to-end tests, in the column names the gateway uses. */
import { withCheckDigits } from '../../src/domain/check-digits.js';

export const PAYROLL_HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount';

/**
 * `rows` rows with orderIds `prefix-0`, `prefix-1`…, each paying a CPF of its own (made
 * from the prefix and the row), so rows of two files never share a document and amount
 * and the cover rule holds nothing, unless a test drops the same prefix twice on purpose.
 */
export function payrollRows(
  prefix: string,
  rows: number,
  amount: (row: number) => string = () => '1,00',
): string[] {
  const person = [...prefix].reduce((code, char) => (code * 31 + char.charCodeAt(0)) % 100, 7);
  return Array.from({ length: rows }, (_, i) => {
    const cpf = withCheckDigits(
      `${String(person).padStart(2, '0')}${String(i + 1).padStart(7, '0')}`,
    );
    return `${prefix}-${i},Pessoa ${i},p${i}@example.com,11987654321,${cpf},EMAIL,p${i}@example.com,"${amount(i)}"`;
  });
}

/** A whole file of payrollRows, LF line ends. */
export function payrollFile(
  prefix: string,
  rows: number,
  amount?: (row: number) => string,
): string {
  return `${[PAYROLL_HEADER, ...payrollRows(prefix, rows, amount)].join('\n')}\n`;
}
