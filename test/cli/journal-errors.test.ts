/**
 * A journal's own word reaches a person from its kind and facts, in the reader's language:
 * a journal written by a newer payouts, and what the journal refuses. Exit 1 for both,
 * and nothing is sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { Database } from '../../src/journal/sqlite.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';

const HEADER = 'orderId,name,email,phone,cpfCnpj,pixKeyType,pixKey,amount';
// The sandbox fails a payout to an e-mail key whose local part is `fail`.
const FAILING = 'e-1,Ana,a@example.com,11987654321,52998224725,EMAIL,fail@example.com,"10,00"';
// Another file's payout whose orderId is the one e-1 would be sent again as.
const TAKEN = 'e-1-r2,Bruno,b@example.com,21998765432,11144477735,EMAIL,b@example.com,"20,00"';

const LATEST = MIGRATIONS.at(-1)?.version;

describe("the journal's own word, said by its kind", { timeout: 60_000 }, () => {
  const folder = useTempFolder();
  let sandbox: Sandbox;
  let home: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    sandbox = await startSandbox({ token: TOKEN });
    ({ home, env } = sandboxHome(folder(), sandbox.url, { PAYOUTS_INBOX_SETTLE: '1ms' }));
  });
  afterEach(() => sandbox.close());

  const cashouts = () => sandbox.ledger().filter((entry) => entry.object === 'cashout');

  it.each([
    [
      'en',
      (path: string) =>
        `payouts: the journal ${path} is at schema version 999, newer than this program knows (${LATEST}): use a newer payouts (payouts --version says which this is). Nothing was sent\n`,
    ],
    [
      'pt-BR',
      (path: string) =>
        `payouts: o diário ${path} está na versão de esquema 999, mais nova do que este programa conhece (${LATEST}): use um payouts mais novo (payouts --version diz qual é este). Nada foi enviado\n`,
    ],
  ])(
    'a journal of a newer payouts, in %s: its versions and path, exit 1',
    async (language, sentence) => {
      expect((await runCli(['run'], { env })).code).toBe(0);
      const path = join(home, 'journal.db');
      const db = new Database(path);
      db.pragma('user_version = 999');
      db.close();
      writeFileSync(join(home, 'inbox', 'pay.csv'), `${HEADER}\n${FAILING}\n`);
      for (const args of [['run'], ['status']]) {
        const result = await runCli(args, { env: { ...env, PAYOUTS_LANGUAGE: language } });
        expect([result.code, result.stderr], args.join(' ')).toEqual([1, sentence(path)]);
      }
      expect(cashouts()).toHaveLength(0);
    },
  );

  it.each([
    [
      'en',
      'payouts retry: e-1: cannot be sent again as e-1-r2: that orderId is already in the journal (from another file); nothing changed\n',
    ],
    [
      'pt-BR',
      'payouts retry: e-1: não pode ser reenviado como e-1-r2: esse ID de pagamento já está no diário (vindo de outro arquivo); nada mudou\n',
    ],
  ])('a retry the journal refuses, in %s: the orderIds, exit 1', async (language, sentence) => {
    writeFileSync(join(home, 'inbox', 'pay.csv'), `${HEADER}\n${FAILING}\n`);
    expect((await runCli(['run'], { env })).code).toBe(2);
    writeFileSync(join(home, 'inbox', 'other.csv'), `${HEADER}\n${TAKEN}\n`);
    expect((await runCli(['run'], { env })).code).toBe(0);
    expect(cashouts().map((entry) => [entry.orderId, entry.status])).toEqual([
      ['e-1', 'failed'],
      ['e-1-r2', 'paid'],
    ]);

    const retry = await runCli(['retry', 'pay.csv', '--by', 'maria'], {
      env: { ...env, PAYOUTS_LANGUAGE: language },
    });
    expect([retry.code, retry.stderr]).toEqual([1, sentence]);
    expect((await runCli(['run'], { env })).code).toBe(0);
    expect(cashouts()).toHaveLength(2);
  });
});
