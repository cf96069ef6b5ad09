/**
 * Personal data out of logs: documents (CPF, CNPJ), e-mail addresses and phone numbers
 * in a log line keep only enough to recognise them (the last two digits, the first
 * letter and the domain). The journal, results and reports for people keep them whole.
 */
import { isValidCnpj } from '../csv/documents.js';

// Letters of any language: "josé@exemplo.com.br" is an address too.
const EMAIL = /([\p{L}\p{N}])[\p{L}\p{N}._%+-]*@([\p{L}\p{N}.-]+\.\p{L}{2,})/gu;
// The alphanumeric CNPJ (from July 2026), like 12.ABC.345/01DE-35: masked when its check
// digits hold, so that an orderId of the same shape stays readable.
const ALPHANUMERIC_CNPJ = /\b[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?\d{2}\b/g;
// CNPJ (14 digits) and CPF (11 digits), written with or without dots, slash and dash,
// and phone numbers of 10 to 13 digits with an optional +: runs of digits and separators.
const DIGITS = /\+?\d[\d.\-/() ]{8,}\d/g;

export function maskPersonalData(text: string): string {
  return text
    .replace(EMAIL, (_match, first: string, domain: string) => `${first}***@${domain}`)
    .replace(ALPHANUMERIC_CNPJ, (match) => {
      const value = match.replace(/[./-]/g, '');
      return /[A-Z]/.test(value) && isValidCnpj(value) ? `***${value.slice(-2)}` : match;
    })
    .replace(DIGITS, (match) => {
      const digits = match.replace(/\D/g, '');
      if (digits.length < 10 || digits.length > 14) return match;
      return `***${digits.slice(-2)}`;
    });
}
