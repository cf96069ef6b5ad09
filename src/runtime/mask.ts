/**
 * Personal data out of logs: documents (CPF, CNPJ), e-mail addresses and phone numbers
 * in a log line keep only enough to recognise them (the last two digits, the first
 * letter and the domain). The journal, results and reports for people keep them whole.
 */

const EMAIL = /\b([A-Za-z0-9])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+\.[A-Za-z]{2,})\b/g;
// CNPJ (14 digits) and CPF (11 digits), written with or without dots, slash and dash,
// and phone numbers of 10 to 13 digits with an optional +: runs of digits and separators.
const DIGITS = /\+?\d[\d.\-/() ]{8,}\d/g;

export function maskPersonalData(text: string): string {
  return text
    .replace(EMAIL, (_match, first: string, domain: string) => `${first}***@${domain}`)
    .replace(DIGITS, (match) => {
      const digits = match.replace(/\D/g, '');
      if (digits.length < 10 || digits.length > 14) return match;
      return `***${digits.slice(-2)}`;
    });
}
