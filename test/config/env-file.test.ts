/** The environment file's reading, as written, and what a shell would read otherwise. */
import { describe, expect, it } from 'vitest';
import { readEnvFileText, shellReadsOtherwise } from '../../src/config/env-file.js';

describe('readEnvFileText', () => {
  it.each<[string, string, Record<string, string>]>([
    [
      'a phone with spaces',
      'PAYOUTS_RECIPIENT_PHONE=(11) 3333-4444',
      { PAYOUTS_RECIPIENT_PHONE: '(11) 3333-4444' },
    ],
    ['a $ and a backtick', 'PAYOUTS_TOKEN=a$HOME`b`', { PAYOUTS_TOKEN: 'a$HOME`b`' }],
    ['a quote inside', "PAYOUTS_TOKEN=it's", { PAYOUTS_TOKEN: "it's" }],
    [
      'spaces around and CRLF',
      '  PAYOUTS_HOME=/srv/payouts  \r\n',
      { PAYOUTS_HOME: '/srv/payouts' },
    ],
    ['comments and blank lines', '# settings\n\n  # more\nPAYOUTS_HOME=/a', { PAYOUTS_HOME: '/a' }],
    ['an = in the value', 'PAYOUTS_TOKEN=abc==', { PAYOUTS_TOKEN: 'abc==' }],
    ['an empty value', 'PAYOUTS_TOKEN=', { PAYOUTS_TOKEN: '' }],
    ['a # in the value', 'PAYOUTS_TOKEN=ab #c', { PAYOUTS_TOKEN: 'ab #c' }],
  ])('%s', (_what, text, values) => {
    expect(readEnvFileText(text)).toEqual({
      ok: true,
      settings: {
        values,
        lineOf: Object.fromEntries(
          Object.keys(values).map((name) => [
            name,
            text.split('\n').findIndex((line) => line.includes(`${name}=`)) + 1,
          ]),
        ),
      },
    });
  });

  it.each<[string, string, string]>([
    ['export', 'export PAYOUTS_HOME=/a', 'line 1: expected NAME=value'],
    ['spaces around =', 'PAYOUTS_HOME = /a', 'line 1: expected NAME=value'],
    ['double quotes', '\nPAYOUTS_HOME="/a b"', 'line 2: the value of PAYOUTS_HOME is in quotes'],
    ['single quotes', "PAYOUTS_TOKEN='x'", 'line 1: the value of PAYOUTS_TOKEN is in quotes'],
    [
      'twice',
      'PAYOUTS_HOME=/a\nPAYOUTS_HOME=/b',
      'line 2: PAYOUTS_HOME is set again (first on line 1)',
    ],
    ['not ours', 'TZ=America/Sao_Paulo', 'line 1: TZ is not a payouts setting'],
  ])('refuses %s, naming the line', (_what, text, said) => {
    const reading = readEnvFileText(text);
    expect(reading.ok).toBe(false);
    expect(reading.ok ? [] : reading.problems).toEqual([expect.stringContaining(said)]);
  });

  it('says every line it refuses, not only the first', () => {
    const reading = readEnvFileText('a b\nPAYOUTS_HOME=/a\nLANG=C');
    expect(reading.ok ? [] : reading.problems.map((problem) => problem.split(':')[0])).toEqual([
      'line 1',
      'line 3',
    ]);
  });
});

describe('shellReadsOtherwise', () => {
  it.each<[string, boolean]>([
    ['/srv/payouts', false],
    ['https://gateway.example.com/api', false],
    ['folha@empresa.com.br', false],
    ['pt-BR', false],
    ['abc+def=', false],
    ['(11) 3333-4444', true],
    ['a$b', true],
    ['a`b`', true],
    ["it's", true],
    ['{"Valor Líquido":"amount"}', true],
    ['a#b', true],
    ['*', true],
  ])('%j: %s', (value, otherwise) => {
    expect(shellReadsOtherwise(value)).toBe(otherwise);
  });
});
