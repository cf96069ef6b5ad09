import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/logger.js';
import { maskPersonalData } from '../../src/runtime/mask.js';

describe('maskPersonalData', () => {
  it.each([
    ['CPF 529.982.247-25 refused', 'CPF ***25 refused'],
    ['CPF 52998224725 refused', 'CPF ***25 refused'],
    ['CNPJ 11.222.333/0001-81', 'CNPJ ***81'],
    ['key ana.souza@example.com', 'key a***@example.com'],
    ['key josé.conceição@exemplo.com.br', 'key j***@exemplo.com.br'],
    ['CNPJ 12.ABC.345/01DE-35 refused', 'CNPJ ***35 refused'],
    ['CNPJ 12ABC34501DE35', 'CNPJ ***35'],
    // The same shape with check digits that do not hold: an orderId, say.
    ['orderId 12ABC34501DE36', 'orderId 12ABC34501DE36'],
    ['phone +55 (11) 98765-4321', 'phone ***21'],
    ['phone 11987654321', 'phone ***21'],
    // Not personal: ids, amounts, dates, addresses, orderIds stay readable.
    ['transaction 1001 of R$ 27.111,15', 'transaction 1001 of R$ 27.111,15'],
    [
      'orderId pay-2026-11-001 at 2026-11-23T08:36:12Z',
      'orderId pay-2026-11-001 at 2026-11-23T08:36:12Z',
    ],
    ['listening on http://127.0.0.1:40859', 'listening on http://127.0.0.1:40859'],
    // File names and orderIds carry dates: an operator must find them as written.
    ['archived as payroll-2026-11.2026-11-25.csv', 'archived as payroll-2026-11.2026-11-25.csv'],
    ['orderId payroll-2026-11-0001 sent', 'orderId payroll-2026-11-0001 sent'],
    ['results/bonus-25.2026-11-25 [2].result.csv', 'results/bonus-25.2026-11-25 [2].result.csv'],
    // A document or phone beside a date is masked all the same.
    ['CPF 52998224725 2026-11-25', 'CPF ***25 2026-11-25'],
    ['fone (11) 98765-4321', 'fone ***21'],
    // Partly punctuated, or spaced, as people type them: masked as before.
    ['CPF 529982247-25 e 529 982 247 25', 'CPF ***25 e ***25'],
    ['CNPJ 11222333/0001-81 e 11.222.333/000181', 'CNPJ ***81 e ***81'],
    ['fone 11-98765-4321', 'fone ***21'],
    ['fone 11 98765-4321, outro +55 11 3456-7890', 'fone ***21, outro ***90'],
  ])('%s', (text, masked) => {
    expect(maskPersonalData(text)).toBe(masked);
  });
});

describe('the logger', () => {
  it('masks personal data and hides the token in what it writes', () => {
    let stderr = '';
    const log = createLogger('info', {
      stderr: { write: (text) => (stderr += String(text)) },
      env: {},
    });
    log.info(
      { token: 'secret-token', person: { name: 'Ana' }, cpfCnpj: '52998224725' },
      'row of ana@example.com, CPF 529.982.247-25',
    );
    expect(stderr).toContain('row of a***@example.com, CPF ***25');
    for (const secret of [
      'secret-token',
      '52998224725',
      '529.982.247-25',
      'ana@example.com',
      'Ana"',
    ]) {
      expect(stderr).not.toContain(secret);
    }
  });
});
