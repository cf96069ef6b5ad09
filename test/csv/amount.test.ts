import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCents, parseReais } from '../../src/csv/amount.js';
import { formatCents } from '../../src/messages/money.js';
import { inEnglish } from '../support/english.js';

describe('parseReais', () => {
  it.each([
    ['1234.56', 123456],
    ['1234,56', 123456],
    ['1.234,56', 123456],
    ['1,234.56', 123456],
    ['R$ 1.234,56', 123456],
    ['R$1.234,56', 123456],
    ['r$ 12,5', 1250],
    ['1234', 123400],
    ['1.234.567', 123456700],
    ['1.234.567,89', 123456789],
    ['0,01', 1],
    [' 12.30 ', 1230],
    ['R$\u00a01.000,00', 100000],
  ])('%j -> %i cents', (text, cents) => {
    expect(inEnglish(parseReais(text))).toEqual({ ok: true, cents });
  });

  it.each([
    ['', /is empty/],
    ['0,00', /zero/],
    ['-12,00', /negative/],
    ['(12,00)', /negative/],
    ['R$ -5', /negative/],
    ['1.234', /could mean thousands or decimals/],
    ['12,345', /could mean thousands or decimals/],
    ['1,2345', /more than two decimal places/],
    ['1.234,567', /more than two decimal places/],
    ['R$ 0,001', /more than two decimal places/],
    ['12.34.56', /thousands separators in the wrong places/],
    ['1,23457E+10', /scientific notation/],
    ['12 reais', /not an amount in reais/],
    ['12,', /not an amount/],
    ['abc', /not an amount/],
    ['99999999999999999999', /too large/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = inEnglish(parseReais(text));
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('reads back every amount in each way it is written', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000_000 }), (cents) => {
        const reais = Math.trunc(cents / 100);
        const fraction = String(cents % 100).padStart(2, '0');
        expect(inEnglish(parseReais(`${reais}.${fraction}`))).toEqual({ ok: true, cents });
        expect(inEnglish(parseReais(`${reais},${fraction}`))).toEqual({ ok: true, cents });
        expect(inEnglish(parseReais(formatCents(cents)))).toEqual({ ok: true, cents });
        expect(inEnglish(parseReais(formatCents(cents).replace('R$ ', '')))).toEqual({
          ok: true,
          cents,
        });
        if (cents % 100 === 0)
          expect(inEnglish(parseReais(String(reais)))).toEqual({ ok: true, cents });
      }),
    );
  });
});

describe('parseReais, large amounts and less common shapes (the general path)', () => {
  it('reads back amounts beyond the common shapes: US grouping, 13+ digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 90_000_000_000_000_000 / 100 }), (cents) => {
        const whole = Math.trunc(cents / 100);
        const fraction = String(cents % 100).padStart(2, '0');
        const us = `${whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
        expect(inEnglish(parseReais(us))).toEqual({ ok: true, cents });
        expect(inEnglish(parseReais(formatCents(cents)))).toEqual({ ok: true, cents });
        expect(inEnglish(parseReais(`${whole},${fraction}`))).toEqual({ ok: true, cents });
      }),
    );
  });
});

describe('parseCents', () => {
  it.each([
    ['1250', 1250],
    ['5', 5],
    [' 100 ', 100],
  ])('%j -> %i', (text, cents) => {
    expect(inEnglish(parseCents(text))).toEqual({ ok: true, cents });
  });

  it.each([
    ['12.50', /not whole cents: this column holds cents.*name the column "amount" or "valor"/],
    ['12,50', /not whole cents/],
    ['0', /zero/],
    ['-100', /negative/],
    ['1,25E+03', /scientific notation/],
    ['R$ 12', /not a whole number of cents/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = inEnglish(parseCents(text));
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.problem).toMatch(problem);
  });

  it('reads back every whole number of cents', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (cents) => {
        expect(inEnglish(parseCents(String(cents)))).toEqual({ ok: true, cents });
      }),
    );
  });
});

// Every space a spreadsheet may put in a number: normal, non-breaking, narrow no-break.
const SPACES = [' ', '\u00a0', '\u202f'] as const;
const THOUSANDS = ['', '.', ',', ...SPACES] as const;

/** `1234567` grouped in threes from the right with `separator`. */
function grouped(whole: string, separator: string): string {
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/**
 * An independent statement of what a reais cell may be, to hold parseReais to: an
 * optional R$, whole reais (bare, or in groups of three after a first group of one to
 * three digits, all with one kind of separator), then optionally one or two decimals
 * after the other mark. One separator before exactly three digits is refused (thousands
 * or decimals?), as are zero and amounts beyond exact integers. Returns the cents, or
 * undefined when the cell must be refused.
 */
function referenceCents(text: string): number | undefined {
  const body = text.trim().replace(/^R\$[ \u00a0\u202f]*/i, '');
  const readings = new Set<bigint>();
  for (const thousands of ['', '\\.', ',', '[ \\u00a0\\u202f]']) {
    for (const decimal of [',', '\\.']) {
      if (thousands === decimal) continue;
      const whole = thousands === '' ? '\\d+' : `\\d+|\\d{1,3}(?:${thousands}\\d{3})+`;
      const match = new RegExp(`^(${whole})(?:${decimal}(\\d{1,2}))?$`).exec(body);
      if (!match) continue;
      const digits = (match[1] ?? '').replace(/\D/g, '');
      readings.add(BigInt(digits) * 100n + BigInt((match[2] ?? '').padEnd(2, '0')));
    }
  }
  expect(readings.size).toBeLessThanOrEqual(1); // the grammar itself is unambiguous
  const [cents] = readings;
  if (cents === undefined || /^\d{1,3}[.,]\d{3}$/.test(body)) return undefined;
  if (cents === 0n || cents > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(cents);
}

describe('parseReais: separators read strictly', () => {
  it.each([
    ['1 234,56', 123456],
    ['1\u00a0234\u00a0567,89', 123456789],
    ['1\u202f234,56', 123456],
    ['R$ 1 234,56', 123456],
    ['R$\u00a01\u00a0234,56', 123456],
    ['1 234.56', 123456],
    ['1 234', 123400],
    ['12 345 678', 1234567800],
    ['0,5', 50],
  ])('%j -> %i cents', (text, cents) => {
    expect(inEnglish(parseReais(text))).toEqual({ ok: true, cents });
  });

  it.each([
    // A space stands only between groups of three digits: never dropped to make another number.
    [
      '9 99',
      /"9 99" has a space that does not separate thousands.*groups of three digits.*1 234,56/,
    ],
    ['100 50,00', /has a space that does not separate thousands/],
    ['1 2345,00', /has a space that does not separate thousands/],
    ['1  234,56', /has a space that does not separate thousands/],
    ['12 ,50', /has a space that does not separate thousands/],
    ['1 234 ,56', /has a space that does not separate thousands/],
    ['1 23.4', /has a space that does not separate thousands/],
    // One kind of thousands separator, and the decimal mark only once, last.
    ['1.234 567,00', /mixes thousands separators/],
    ['1,234,56', /thousands separators in the wrong places/],
    ['1.234.5', /thousands separators in the wrong places/],
    ['1.2.3,00', /thousands separators in the wrong places/],
    ['1.,5', /not an amount in reais/],
    [',50', /not an amount in reais.*0,50/],
    // Signs and parentheses: a negative amount, said so, however it is written.
    ['R$ (1.234,56)', /negative \(R\$ -1\.234,56\).*parentheses/],
    ['(R$ 1.234,56)', /negative \(R\$ -1\.234,56\)/],
    ['-R$ 5,00', /negative \(R\$ -5,00\)/],
    ['R$ 5,00-', /negative/],
    ['- 5,00', /negative/],
    ['+10,00', /not an amount in reais/],
    ['(5,00', /not an amount in reais/],
    // Another currency, or R$ anywhere but in front.
    ['US$ 10,00', /not in reais/],
    ['€ 10,00', /not in reais/],
    ['$10.00', /not in reais/],
    ['10,00 R$', /not an amount in reais/],
    ['R$ R$ 10,00', /not an amount in reais/],
  ])('%j is refused: %s', (text, problem) => {
    const reading = inEnglish(parseReais(text));
    expect(reading).toEqual({ ok: false, problem: expect.stringMatching(problem) });
  });

  it('reads back every amount written in every accepted way', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000_000_000_000 }),
        fc.constantFrom(...THOUSANDS),
        fc.constantFrom(',', '.'),
        fc.constantFrom('', 'R$', 'R$ ', 'R$\u00a0', 'r$ ', ' R$  '),
        fc.constantFrom('two', 'one', 'none'),
        (cents, thousands, decimal, prefix, decimals) => {
          fc.pre(thousands !== decimal);
          const whole = grouped(String(Math.trunc(cents / 100)), thousands);
          const fraction = String(cents % 100).padStart(2, '0');
          let text: string;
          if (decimals === 'two') text = `${whole}${decimal}${fraction}`;
          else if (decimals === 'one' && fraction.endsWith('0'))
            text = `${whole}${decimal}${fraction[0]}`;
          else if (decimals === 'none' && fraction === '00') text = whole;
          else return;
          // One separator before three digits is the one shape refused as ambiguous.
          fc.pre(!/^\d{1,3}[.,]\d{3}$/.test(text));
          expect(inEnglish(parseReais(`${prefix}${text}`))).toEqual({ ok: true, cents });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with the grammar on any string of digits and separators: refused, or read as written', () => {
    const character = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...'0123456789'.split('')) },
      { weight: 3, arbitrary: fc.constantFrom('.', ',', ...SPACES) },
    );
    fc.assert(
      fc.property(
        fc.constantFrom('', 'R$ ', 'R$'),
        fc.array(character, { minLength: 1, maxLength: 14 }).map((c) => c.join('')),
        (prefix, body) => {
          const text = prefix + body;
          const expected = referenceCents(text);
          const reading = inEnglish(parseReais(text));
          if (expected === undefined) expect(reading.ok, JSON.stringify(text)).toBe(false);
          else expect(reading, JSON.stringify(text)).toEqual({ ok: true, cents: expected });
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('reads the common shapes, quickly read, as the grammar does, at every length and edge', () => {
    // The quick path takes `1.234,56`, `1234,56` (after `R$` or `R$ `) and `1234.56`, up to
    // 12 whole digits; every text near those shapes must read as the grammar says.
    const texts: string[] = [];
    for (let length = 1; length <= 14; length++) {
      const digits = '9876543210987654'.slice(0, length);
      for (const whole of [digits, grouped(digits, '.'), `0${digits}`]) {
        for (const end of [',50', ',05', '.50', ',5', ',500', '', ',00', '.', ',']) {
          for (const prefix of ['', 'R$', 'R$ ', 'R$  ', 'r$ ', ' R$ ']) {
            texts.push(`${prefix}${whole}${end}`, `${prefix}${whole}${end} `);
          }
        }
      }
    }
    texts.push('1.2345,67', '1.23,45', '12.34', '123.456,78', '1.234.567.890.123,45', '0,00');
    for (const text of texts) {
      const expected = referenceCents(text);
      const reading = inEnglish(parseReais(text));
      if (expected === undefined) expect(reading.ok, JSON.stringify(text)).toBe(false);
      else expect(reading, JSON.stringify(text)).toEqual({ ok: true, cents: expected });
    }
  });

  it('refuses a space between digits that are not groups of three, naming the space', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 99_999_999_999 }).map(String),
        fc.constantFrom(...SPACES),
        fc.nat(),
        fc.constantFrom('', ',50', '.50'),
        (digits, space, seed, fraction) => {
          fc.pre(digits.length >= 2);
          const at = 1 + (seed % (digits.length - 1));
          // Only a cut leaving exactly three digits after it could be a thousands space.
          fc.pre((digits.length - at) % 3 !== 0);
          const text = `${digits.slice(0, at)}${space}${digits.slice(at)}${fraction}`;
          expect(inEnglish(parseReais(text))).toEqual({
            ok: false,
            problem: expect.stringMatching(/has a space that does not separate thousands/),
          });
        },
      ),
    );
  });

  it('refuses every accepted amount made negative, with a sign or parentheses, and says so', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000_000 }),
        fc.constantFrom('-%', '%-', '(%)', 'R$ (%)', '(R$ %)', '-R$ %', 'R$ -%', '- %'),
        (cents, shape) => {
          const text = shape.replace('%', formatCents(cents).replace('R$ ', ''));
          expect(inEnglish(parseReais(text))).toEqual({
            ok: false,
            problem: expect.stringMatching(
              new RegExp(`negative \\(R\\$ -${formatCents(cents).slice(3).replace(/\./g, '\\.')}`),
            ),
          });
        },
      ),
    );
  });
});
