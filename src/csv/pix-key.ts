/**
 * Pix keys: the key type from a code or a name, the key checked against its type and
 * written the way the scheme stores it, and the type inferred when it is unambiguous.
 */
import { PIX_KEY_TYPES, type PixKeyTypeName } from '../gateway/contract.js';
import { isValidCnpj, isValidCpf } from '../domain/check-digits.js';
import { SCIENTIFIC_NOTATION, readDocument } from './documents.js';
import { foldText } from './fold.js';
import type { Said } from '../messages/said.js';

export type KeyReading =
  { ok: true; type: PixKeyTypeName; key: string; note?: Said } | { ok: false; problem: Said };

const TYPE_NAMES: Readonly<Record<string, PixKeyTypeName>> = {
  cpf: 'CPF',
  cnpj: 'CNPJ',
  email: 'EMAIL',
  'e-mail': 'EMAIL',
  telefone: 'TELEFONE',
  phone: 'TELEFONE',
  celular: 'TELEFONE',
  random_key: 'RANDOM_KEY',
  'random key': 'RANDOM_KEY',
  randomkey: 'RANDOM_KEY',
  evp: 'RANDOM_KEY',
  aleatoria: 'RANDOM_KEY',
  'chave aleatoria': 'RANDOM_KEY',
};

/** `0`..`4` or a name; undefined when the text names no type. */
export function parseKeyType(text: string): PixKeyTypeName | undefined {
  // A file spells its types a handful of ways, on every row: remember the readings.
  if (typeCache.has(text)) return typeCache.get(text);
  const folded = foldText(text);
  const type = /^[0-4]$/.test(folded) ? PIX_KEY_TYPES[Number(folded)] : TYPE_NAMES[folded];
  if (typeCache.size < 256) typeCache.set(text, type);
  return type;
}

const typeCache = new Map<string, PixKeyTypeName | undefined>();

// Area codes (DDD) in use in Brazil.
const AREA_CODES = new Set([
  11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 28, 31, 32, 33, 34, 35, 37, 38, 41, 42, 43,
  44, 45, 46, 47, 48, 49, 51, 53, 54, 55, 61, 62, 63, 64, 65, 66, 67, 68, 69, 71, 73, 74, 75, 77,
  79, 81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99,
]);

/**
 * A Brazilian phone number in +55 form, from the usual ways of writing one:
 * `(11) 98765-4321`, `11 98765 4321`, `+55 11 98765-4321`, `5511987654321`, `011...`.
 * Landlines (8 digits) only when `allowLandline`; Pix phone keys are mobiles.
 */
export function normalisePhone(text: string, allowLandline: boolean): string | undefined {
  const trimmed = text.trim();
  const international = trimmed.startsWith('+');
  let digits = phoneDigits(trimmed, international ? 1 : 0);
  if (digits === undefined) return undefined;
  if (international || (digits.startsWith('55') && digits.length >= 12)) {
    if (!digits.startsWith('55')) return undefined;
    digits = digits.slice(2);
  } else if (digits.startsWith('0')) {
    digits = digits.slice(1); // trunk prefix
  }
  if (digits.length < 2) return undefined;
  const area = (digits.charCodeAt(0) - 48) * 10 + digits.charCodeAt(1) - 48;
  if (!AREA_CODES.has(area)) return undefined;
  // The subscriber's number, after the area code: 9 and eight digits, or 2 to 5 and seven.
  const subscriber = digits.length - 2;
  const lead = digits.charCodeAt(2);
  const mobile = subscriber === 9 && lead === 57;
  const landline = subscriber === 8 && lead >= 50 && lead <= 53;
  if (!mobile && !(allowLandline && landline)) return undefined;
  return `+55${digits}`;
}

/**
 * The digits of `text` from `from` on, when every other character there is a space or
 * `( ) . -` and there is at least one character; undefined otherwise. One look at each
 * character, cheaper than a regex's test and then its replace (docs/benchmarks.md).
 */
function phoneDigits(text: string, from: number): string | undefined {
  if (text.length <= from) return undefined;
  let digits = '';
  let run = -1;
  for (let at = from; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code >= 48 && code <= 57) {
      if (run < 0) run = at;
      continue;
    }
    if (run >= 0) digits += text.slice(run, at);
    run = -1;
    const punctuation = code === 40 || code === 41 || code === 46 || code === 45 || code === 32;
    if (!punctuation && !/\s/.test(text.charAt(at))) return undefined;
  }
  return run >= 0 ? digits + text.slice(run) : digits;
}

const EMAIL = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+\.[a-z]{2,}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A contact e-mail (the recipient's `person.email`): looser than a Pix e-mail key. */
export function isEmail(text: string): boolean {
  return text.length <= 77 && EMAIL.test(text);
}

/*
 * Pix keys follow the formats of DICT, the Central Bank's key directory (its API states
 * them as patterns): CPF 11 digits; CNPJ 14 (the alphanumeric CNPJ, 12 letters or digits
 * then 2 check digits, is sent as it is: the gateway interface sets no format on pixKey
 * or cpfCnpj); phone `+55`, area code and a 9-digit mobile; random key (EVP) a UUID in
 * lower case; e-mail at most 77 characters, lower-case ASCII, the name before the @ from
 * letters, digits and ! # $ & ' * + / = ? ^ _ ` { | } ~ - . and the domain from labels
 * of letters, digits and inner hyphens. Beyond DICT's pattern, a dot may not start or end
 * the name or follow another (RFC 5321 addresses), and the domain ends in a name
 * (`.com`, not `.123` or nothing): no such address can receive the e-mail that proves a
 * key's ownership, so no such key exists.
 */
const EMAIL_KEY_MAX = 77;
const EMAIL_NAME_CHARACTER = /[a-z0-9!#$&'*+/=?^_`{|}~.-]/;
const EMAIL_NAME = /^[a-z0-9!#$&'*+/=?^_`{|}~.-]*$/;

/** Why `key` (already in lower case) is not a Pix e-mail key; undefined when it is one. */
function emailKeyProblem(key: string): Said | undefined {
  if (key.length > EMAIL_KEY_MAX) {
    return { code: 'emailKeyTooLong', length: key.length, max: EMAIL_KEY_MAX };
  }
  if (/\s/.test(key)) return { code: 'emailKeySpace' };
  const foreign = /[^\x21-\x7e]/u.exec(key)?.[0];
  if (foreign !== undefined) {
    return { code: 'emailKeyNotAscii', character: foreign };
  }
  // One @, with something on either side.
  const at = key.indexOf('@');
  if (at <= 0 || at === key.length - 1 || key.includes('@', at + 1)) {
    return { code: 'emailKeyShape' };
  }
  const name = key.slice(0, at);
  const domain = key.slice(at + 1);
  if (key.includes('..')) return { code: 'emailKeyTwoDots' };
  if (/^\.|\.$/.test(name) || /^\.|\.$/.test(domain)) {
    return { code: 'emailKeyDotAtEdge' };
  }
  // One test of the whole name first: a key on every third row, its characters one by one
  // only to say which is wrong.
  const badInName = EMAIL_NAME.test(name)
    ? undefined
    : [...name].find((character) => !EMAIL_NAME_CHARACTER.test(character));
  if (badInName !== undefined) {
    return { code: 'emailKeyNameCharacter', character: badInName };
  }
  const labels = domain.split('.');
  if (labels.length < 2) return { code: 'emailKeyNoDomain' };
  for (const label of labels) {
    if (label.includes('_')) return { code: 'emailKeyDomainUnderscore' };
    if (label.startsWith('-') || label.endsWith('-')) {
      return { code: 'emailKeyDomainHyphen', label };
    }
    if (label.length > 63) return { code: 'emailKeyDomainPartLong' };
    const bad = /[^a-z0-9-]/.exec(label)?.[0];
    if (bad !== undefined) return { code: 'emailKeyDomainCharacter', character: bad };
  }
  // Every label is well formed by now; the last one must be a name, not a number.
  if (!/^[a-z]/.test(labels[labels.length - 1] ?? '')) {
    return { code: 'emailKeyNoDomainName' };
  }
  return undefined;
}

/** Checks a key against its stated type, and writes it the way the scheme stores it. */
export function readKey(type: PixKeyTypeName, text: string): KeyReading {
  const key = text.trim();
  if (key === '') return { ok: false, problem: { code: 'empty' } };
  const numeric = type === 'CPF' || type === 'CNPJ' || type === 'TELEFONE';
  if (numeric && SCIENTIFIC_NOTATION.test(key)) {
    return { ok: false, problem: { code: 'keyScientific', key } };
  }
  switch (type) {
    case 'CPF':
    case 'CNPJ': {
      // The key type says which document this is: a CNPJ key that lost its zeros is a CNPJ.
      const document = readDocument(key, type);
      if (!document.ok) {
        return { ok: false, problem: { code: 'keyDocument', type, problem: document.problem } };
      }
      if (document.kind !== type) {
        return { ok: false, problem: { code: 'keyDocumentKind', type, key, kind: document.kind } };
      }
      return document.restoredZeros > 0
        ? {
            ok: true,
            type,
            key: document.value,
            note: { code: 'zerosRestored', written: key, read: document.value },
          }
        : { ok: true, type, key: document.value };
    }
    case 'EMAIL': {
      // DICT stores e-mail keys in lower case: `Ana@Example.com` is the key `ana@example.com`.
      const lower = key.toLowerCase();
      const problem = emailKeyProblem(lower);
      return problem === undefined
        ? { ok: true, type, key: lower }
        : { ok: false, problem: { code: 'keyEmail', key, problem } };
    }
    case 'TELEFONE': {
      const phone = normalisePhone(key, false);
      return phone
        ? { ok: true, type, key: phone }
        : { ok: false, problem: { code: 'keyPhone', key } };
    }
    case 'RANDOM_KEY':
      return UUID.test(key)
        ? { ok: true, type, key: key.toLowerCase() }
        : { ok: false, problem: { code: 'keyRandom', key } };
  }
}

/**
 * The key's type when no type was given, only where the key can be read one way:
 * an 11-digit number that is both a valid CPF and a plausible mobile is not guessed.
 */
export function inferKey(text: string): KeyReading {
  const key = text.trim();
  if (key === '') return { ok: false, problem: { code: 'empty' } };
  if (key.includes('@')) return readKey('EMAIL', key);
  if (UUID.test(key)) return readKey('RANDOM_KEY', key);
  if (key.startsWith('+') || /^\(\d{2,3}\)/.test(key)) return readKey('TELEFONE', key);
  if (/^\d{3}\.\d{3}\.\d{3}-\d{2}$/.test(key)) return readKey('CPF', key);
  if (/^[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2}$/i.test(key))
    return readKey('CNPJ', key);
  const compact = key.replace(/[\s.\-/]/g, '').toUpperCase();
  if (/^[0-9A-Z]{12}\d{2}$/.test(compact) && isValidCnpj(compact)) return readKey('CNPJ', key);
  if (/^\d+$/.test(compact)) {
    const cpf = compact.length <= 11 && isValidCpf(compact.padStart(11, '0'));
    const phone = normalisePhone(compact, false) !== undefined;
    if (cpf && phone) {
      return { ok: false, problem: { code: 'keyCpfOrPhone', key } };
    }
    if (cpf) return readKey('CPF', key);
    if (phone) return readKey('TELEFONE', key);
  }
  return { ok: false, problem: { code: 'keyTypeUntold', key } };
}
