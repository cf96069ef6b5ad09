import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgresJournalReadOnly } from '../../src/journal/postgres/open.js';
import { postbackSecret } from '../../src/postback/secret.js';
import { stopChild } from '../support/cli.js';
import { TEN_MINUTES_MS, clockSetBy, faketimeMissing, setSkew } from '../support/faketime.js';
import { useTempFolder } from '../support/files.js';
import { closedPort } from '../support/gateway.js';
import { useHostsOfOneHome } from '../support/hosts.js';
import { payrollFile } from '../support/payroll.js';
import { postgresMissing } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

/**
 * With the receiver on, a payout's first poll falls 30 to 60 s after its send, and a pass
 * follows in rounds of 15 s (half of `resendGrace`, 30 s here), each reading the journal's
 * poll times afresh, the first from when the payouts are pending: a host that learns of
 * them paid within half a round of their release was woken, not looking again.
 */
const WOKEN_WITHIN_MS = 7_500;

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `postbacks to several processes on one journal on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  { timeout: 120_000 },
  () => {
    const hosts = useHostsOfOneHome();
    const folder = useTempFolder();

    it('a postback received by a process standing by wakes the process following the payout; one naming no payout changes nothing', async () => {
      const sandbox = hosts.sandbox();
      const { home, env } = await hosts.home('woken');
      const [portA, portB] = [await closedPort(), await closedPort()];
      const slow = { ...env, PAYOUTS_INBOX_RESCAN: '60s', PAYOUTS_RESEND_GRACE: '30s' };
      // The gateway reaches the hosts through one address, which leads to the second alone.
      const first = hosts.start(
        {
          ...slow,
          PAYOUTS_POSTBACK_LISTEN: `127.0.0.1:${portA}`,
          PAYOUTS_POSTBACK_PUBLIC_URL: `http://127.0.0.1:${portB}`,
        },
        'pay-1',
      );
      await waitFor('pay-1 watching', () => first.log().includes('watching '));
      // A second process of pay-1's host: it waits for that host's lock, and meanwhile takes
      // postbacks only, so the process that follows the payouts is pay-1's first alone.
      const second = hosts.start(
        { ...slow, PAYOUTS_POSTBACK_LISTEN: `127.0.0.1:${portB}` },
        'pay-1',
      );
      await waitFor('the second process waiting for the first', () =>
        /is working on this home folder: waiting for it/.test(second.log()),
      );

      // Pending until pay-1 follows them, so that no postback comes before it waits.
      sandbox.settleAs('pending');
      writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('w', 3));
      const journal = await openPostgresJournalReadOnly({
        kind: 'postgres',
        url: env['PAYOUTS_JOURNAL'] as string,
      });
      try {
        await waitFor(
          'pay-1 to follow the 3 payouts',
          async () => (await journal.countsByState())['pending']?.count === 3,
        );
        sandbox.settleAs('by-key');
        await waitFor(
          '3 payouts paid at the gateway',
          () => sandbox.ledger().filter((entry) => entry.status === 'paid').length === 3,
        );
        await waitFor(
          'pay-1 to journal the 3 payouts paid',
          async () => (await journal.countsByState())['paid']?.count === 3,
          WOKEN_WITHIN_MS,
        );

        // A postback naming a payout no host follows is taken, and changes nothing.
        const before = await journal.countsByState();
        const stray = await fetch(`http://127.0.0.1:${portB}/postback/${postbackSecret(home)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ transactionId: 999_999, orderId: 'nobody', status: 'paid' }),
        });
        expect(stray.status).toBe(204);
        expect(await journal.countsByState()).toEqual(before);
      } finally {
        await journal.close();
      }
      expect(await stopChild(second.child)).toBe(0);
      expect(await stopChild(first.child)).toBe(0);
    });

    const faketimeAbsent = faketimeMissing();
    it.skipIf(faketimeAbsent !== undefined)(
      `a postback taken by a host standing aside, its clock ten minutes ahead, wakes the host following the payout, which polls it at once${faketimeAbsent ? ` (skipped: ${faketimeAbsent})` : ''}`,
      async () => {
        const sandbox = hosts.sandbox();
        const { home, env } = await hosts.home('aside');
        const [portA, portB] = [await closedPort(), await closedPort()];
        const slow = { ...env, PAYOUTS_INBOX_RESCAN: '60s', PAYOUTS_RESEND_GRACE: '30s' };
        // pay-2 listens on the one address the gateway is given, then its clock goes off.
        const skewFile = join(folder(), 'skew');
        const aside = hosts.start(
          { ...slow, ...clockSetBy(skewFile, 0), PAYOUTS_POSTBACK_LISTEN: `127.0.0.1:${portB}` },
          'pay-2',
        );
        await waitFor('pay-2 watching', () => aside.log().includes('watching '));
        setSkew(skewFile, TEN_MINUTES_MS);
        await waitFor('pay-2 standing aside', () =>
          /the clock of host pay-2 reads \d+ s ahead/.test(aside.log()),
        );
        const following = hosts.start(
          {
            ...slow,
            PAYOUTS_POSTBACK_LISTEN: `127.0.0.1:${portA}`,
            PAYOUTS_POSTBACK_PUBLIC_URL: `http://127.0.0.1:${portB}`,
          },
          'pay-1',
        );
        await waitFor('pay-1 watching', () => following.log().includes('watching '));

        sandbox.settleAs('pending');
        writeFileSync(join(home, 'inbox', 'folha.csv'), payrollFile('s', 3));
        const journal = await openPostgresJournalReadOnly({
          kind: 'postgres',
          url: env['PAYOUTS_JOURNAL'] as string,
        });
        try {
          await waitFor(
            'pay-1 to follow the 3 payouts',
            async () => (await journal.countsByState())['pending']?.count === 3,
          );
          sandbox.settleAs('by-key');
          await waitFor(
            '3 payouts paid at the gateway',
            () => sandbox.ledger().filter((entry) => entry.status === 'paid').length === 3,
          );
          await waitFor(
            'pay-1 to journal the 3 payouts paid',
            async () => (await journal.countsByState())['paid']?.count === 3,
            WOKEN_WITHIN_MS,
          );
        } finally {
          await journal.close();
        }
        // pay-2 sent nothing: it stood aside before the file came.
        expect(aside.log()).not.toContain('folha.csv');
        expect(await stopChild(following.child)).toBe(0);
        expect(await stopChild(aside.child)).toBe(0);
      },
    );
  },
);
