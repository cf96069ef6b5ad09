/**
 * Personal data out of logs: documents (CPF, CNPJ), e-mail addresses and phone numbers
 * in a log line keep only enough to recognise them (the last two digits, the first
 * letter and the domain). The journal, results and reports for people keep them whole.
 */
import { isValidCnpj } from '../domain/check-digits.js';

// Letters of any language: "josé@exemplo.com.br" is an address too.
const EMAIL = /([\p{L}\p{N}])[\p{L}\p{N}._%+-]*@([\p{L}\p{N}.-]+\.\p{L}{2,})/gu;
// The alphanumeric CNPJ (from July 2026), like 12.ABC.345/01DE-35: masked when its check
// digits hold, so that an orderId of the same shape stays readable.
const ALPHANUMERIC_CNPJ = /\b[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}\/?[0-9A-Z]{4}-?\d{2}\b/g;
// CPF and CNPJ as written or as bare digits, and phone numbers as Brazil writes them:
// only these shapes, so that the dates in a file name or an orderId
// (payroll-2026-11.2026-11-25.csv, payroll-2026-11-0001) stay as the operator must find them.
const DOCUMENT_OR_PHONE = new RegExp(
  [
    String.raw`\d{3}[. ]?\d{3}[. ]?\d{3}[- ]?\d{2}`, // CPF 529.982.247-25, 529 982 247 25
    String.raw`\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2}`, // CNPJ 11.222.333/0001-81
    String.raw`(?:\+?55[ -]?)?\(?\d{2}\)?[ -]?9?\d{4}[- ]?\d{4}`, // phone (11) 98765-4321
    String.raw`\+?\d{10,14}`, // bare: a CPF, a CNPJ, a phone
  ]
    .map((shape) => `(?<!\\d)(?:${shape})(?!\\d)`)
    .join('|'),
  'g',
);

export function maskPersonalData(text: string): string {
  return text
    .replace(EMAIL, (_match, first: string, domain: string) => `${first}***@${domain}`)
    .replace(ALPHANUMERIC_CNPJ, (match) => {
      const value = match.replace(/[./-]/g, '');
      return /[A-Z]/.test(value) && isValidCnpj(value) ? `***${value.slice(-2)}` : match;
    })
    .replace(DOCUMENT_OR_PHONE, (match) => `***${match.replace(/\D/g, '').slice(-2)}`);
}
