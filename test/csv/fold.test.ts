import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldText, singleSpaced } from '../../src/csv/fold.js';

/** The definition foldText's fast paths must agree with. */
const reference = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();

describe('foldText', () => {
  it.each([
    ['  João   da Conceição ', 'joao da conceicao'],
    ['AÇOUGUE SÃO JORGE', 'acougue sao jorge'],
    ['Zoë Ångström', 'zoe angstrom'],
    ['Straße Æsir', 'straße æsir'],
    ['Łódź', 'łodz'],
  ])('%j -> %j', (text, folded) => {
    expect(foldText(text)).toBe(folded);
  });

  it('agrees with decomposing and dropping the marks for every Latin-1 character, wherever it stands', () => {
    // The quick path takes ASCII and accented letters with single inner spaces; every
    // other character sends the text to the general path: each must fold as decomposing does.
    for (let code = 0; code <= 0xff; code++) {
      const c = String.fromCharCode(code);
      for (const text of [c, `${c}Ab`, `Ab${c}`, `A${c}b`, `São ${c} Jo`, `${c}${c} Ç`]) {
        expect([code, foldText(text)]).toEqual([code, reference(text)]);
      }
    }
  });

  it('agrees with decomposing and dropping the marks, for any text', () => {
    const latin = fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c));
    const any = fc.oneof(latin, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
    fc.assert(
      fc.property(
        fc.array(any, { maxLength: 30 }).map((a) => a.join('')),
        (text) => {
          expect(foldText(text)).toBe(reference(text));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('singleSpaced', () => {
  const reference = (text: string) => text.replace(/\s+/g, ' ').trim();

  it("is the regex's single spacing for every UTF-16 unit, wherever it stands", () => {
    // The quick look answers for most characters; every one must agree with \s.
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      for (const text of [c, `${c}Ab`, `Ab${c}`, `A${c}b`, `A ${c} b`, `A${c}${c}b`]) {
        if (singleSpaced(text) !== reference(text))
          expect([code, singleSpaced(text)]).toEqual([code, reference(text)]);
      }
    }
  });

  it.each([
    ['Ana Souza', 'Ana Souza'],
    ['  Ana\t\tSouza ', 'Ana Souza'],
    ['Ana\u00a0Souza', 'Ana Souza'],
    ['Ana\u2003 Souza', 'Ana Souza'],
    ['', ''],
  ])('%j -> %j', (text, spaced) => {
    expect(singleSpaced(text)).toBe(spaced);
  });
});
