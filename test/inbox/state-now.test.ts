/**
 * A held row names the payout it repeats as that payout is when the row is read, not as
 * it was when the row was admitted: a payout queued in the same pass and paid seconds
 * later is "pago" in the result file, in `status` and in the next summary.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { passHome } from '../support/pass-home.js';

const HEADER = 'Nome,CPF,E-mail,Celular,Chave Pix,Valor';
const ANA = 'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.500,00"';

describe('the state a held row names', () => {
  it('is the state of the payout it repeats now: paid, not queued as it was when the row was read', async () => {
    const home = await passHome();
    const env = { ...home.env(), PAYOUTS_LANGUAGE: 'pt-BR' };
    // One pass: folha.csv's row is queued when its re-export's row is read and held for it.
    home.drop('folha.csv', [HEADER, ANA]);
    home.drop('folha_final.csv', [HEADER, ANA]);
    const run = await runCli(['run'], { env });
    expect(run.code).toBe(2);
    expect(home.sandbox.ledger().filter((entry) => entry.object === 'cashout')).toHaveLength(1);

    const name = readdirSync(home.folders.results).find((file) => file.startsWith('folha_final'));
    const result = readFileSync(join(home.folders.results, name ?? ''), 'utf8');
    expect(result).toContain('folha.csv, linha 2');
    expect(result).toContain('(agora pago');
    expect(result).not.toContain('na fila');
    const status = await runCli(['status', 'folha_final.csv'], { env });
    expect(status.stdout).toContain('(now paid');
    expect(status.stdout).not.toContain('now queued');
    const again = await runCli(['run'], { env });
    expect(again.stdout).toContain('(agora pago');
    expect(again.stdout).not.toContain('na fila');
  });
});
