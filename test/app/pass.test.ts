/**
 * A pass against the sandbox, in this process: what a stop does while the pass waits on
 * the gateway.
 */
import { describe, expect, it } from 'vitest';
import { passHome } from '../support/pass-home.js';
import { PAYROLL_HEADER, payrollRows } from '../support/payroll.js';

describe('a pass', () => {
  it('stopped while it reads the balance ends at once: nothing funded, held or sent', async () => {
    const stop = new AbortController();
    // The stop comes once the balance read has reached a gateway that will never answer.
    const home = await passHome({
      onRequest: ({ path, fault }) => {
        if (fault === 'hang' && path.endsWith('/balance')) stop.abort();
      },
    });
    home.sandbox.setFaults({ hangRate: 1, operations: ['getBalance'] });
    home.drop('folha.csv', [PAYROLL_HEADER, ...payrollRows('folha', 2)]);
    // Without the stop reaching the read, the pass would wait out this minute (and the
    // test its 30 s time-out).
    const { files } = await home.run(
      { requestTimeout: 60_000 },
      { signal: stop.signal, requestTimeoutMs: 60_000 },
    );
    expect(stop.signal.aborted).toBe(true);
    expect(files.map((file) => file.state)).toEqual(['taken']);
    expect(home.sandbox.ledger()).toEqual([]);
    const counts = await home.withJournal((journal) => journal.countsByState());
    expect(counts).toEqual({ queued: { count: 2, cents: 200 } });
  });
});
