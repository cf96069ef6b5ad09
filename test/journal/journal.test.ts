import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/journal/sqlite.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CashOutRequest } from '../../src/gateway/contract.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { JournalError, openJournal, type Journal } from '../../src/journal/journal.js';
import { batch, describeJournal } from './conformance.js';
import { useTempFolder } from '../support/files.js';
import { cashOutRequest } from '../support/gateway.js';

describe('the SQLite journal', () => {
  const folder = useTempFolder();
  describeJournal('conforms to the Journal interface', (store, now) =>
    openJournal(join(folder(), 'home', store), { now }),
  );

  describe('as a file', () => {
    const opened: Journal[] = [];
    const open = () => {
      const journal = openJournal(join(folder(), 'home', 'journal.db'));
      opened.push(journal);
      return journal;
    };
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });

    it('is created owner-only, in WAL mode with synchronous FULL, and migrates once', async () => {
      const journal = open();
      const path = journal.path;
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(folder(), 'home')).mode & 0o777).toBe(0o700);
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
      raw.close();
      open(); // a second open finds the schema in place
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    });

    it("reads the English sentences an earlier version kept as a batch's problems", async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      const path = journal.path;
      await journal.close();
      opened.pop();
      const raw = new Database(path);
      raw
        .prepare('UPDATE batches SET problems = ? WHERE id = ?')
        .run('["control total mismatch"]', id);
      raw.close();
      expect((await open().batch(id))?.problems).toEqual([
        { code: 'english', text: 'control total mismatch' },
      ]);
    });

    it('gives every request back as it was journaled, to the byte, though kept as columns', async () => {
      const person = { name: 'Ana Souza', email: 'ana@example.com', phone: '+5511987654321' };
      // In the reader's key order (toCashOutRequest), as every journaled request is.
      const request = (
        orderId: string,
        pixKeyType: number,
        pixKey: string,
        cpfCnpj = '52998224725',
        who = person,
      ): CashOutRequest => ({ value: 1234, pixKeyType, pixKey, cpfCnpj, person: who, orderId });
      const requests: CashOutRequest[] = [
        request('cpf-key', 0, '52998224725'),
        request('another-cpf-key', 0, '11144477735'),
        request('cnpj-key', 1, '12ABC34501DE35', '12.ABC.345/01DE-35'),
        request('email-key', 2, 'ana@example.com'),
        request('other-email-key', 2, 'other@example.com'),
        request('phone-key', 3, '+5511987654321'),
        request('random-key-as-cpf', 4, '52998224725'),
        request('random-key ção', 4, '0c6f1e2a-7f3b-4c1d-9e8a-5b2d', '52998224725', {
          name: 'Zoë "Zé" \\ Araújo \u2028 \t 😀 \u0001',
          email: '',
          phone: '+55',
        }),
      ];
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      await journal.admitPayouts(
        id,
        requests.map((request, i) => ({ line: i + 2, request })),
        { duplicateWindowMs: 0 },
      );
      const claims = await journal.claimToSend('run-1', 100, 60_000);
      expect(claims.map((claim) => JSON.stringify(claim.request))).toEqual(
        requests.map((request) => JSON.stringify(request)),
      );
    });

    it("leaves a file's admissions in the write-ahead log, copied into the database by the next other commit", async () => {
      const journal = open();
      const id = await journal.recordBatch(batch, []);
      const empty = statSync(journal.path).size;
      for (let chunk = 0; chunk < 20; chunk++) {
        const payouts = Array.from({ length: 1_000 }, (_, i) => ({
          line: chunk * 1_000 + i + 2,
          request: cashOutRequest(`order-${chunk}-${i}`),
        }));
        await journal.admitPayouts(id, payouts, { duplicateWindowMs: 0 });
      }
      // More than the 1,000 pages at which any other commit checkpoints.
      expect(statSync(`${journal.path}-wal`).size).toBeGreaterThan(1_000 * 4_096);
      expect(statSync(journal.path).size).toBe(empty);
      await journal.recordBatch({ ...batch, sha256: 'cd' }, []);
      expect(statSync(journal.path).size).toBeGreaterThan(20_000 * 100);
    });

    it('refuses a journal written by a newer version', async () => {
      const journal = open();
      await journal.close();
      opened.pop();
      const raw = new Database(journal.path);
      raw.pragma('user_version = 99');
      raw.close();
      expect(() => open()).toThrow(JournalError);
      expect(() => open()).toThrow(
        `schema version 99, newer than this program knows (${MIGRATIONS.at(-1)?.version})`,
      );
    });
  });
});
