import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { journalState, openJournal } from '../../src/journal/open.js';
import { LATEST_POSTGRES_SCHEMA } from '../../src/journal/postgres/open.js';
import { BIN, cleanEnv, runCli } from '../support/cli.js';
import { usePendingSandboxHome } from '../support/home.js';
import { TOKEN, closedPort, ledgerCounts } from '../support/gateway.js';
import { postgresMissing, usePostgres } from '../support/postgres.js';

const execFileAsync = promisify(execFile);
const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
/** In every URL these tests give: it must be printed nowhere (the test cluster trusts loopback). */
const PASSWORD = 'pg-s3cr3t-pw';

const postgresAbsent = postgresMissing();
(postgresAbsent ? describe.skip : describe)(
  `payouts run with the journal on PostgreSQL${postgresAbsent ? ` (skipped: ${postgresAbsent})` : ''}`,
  () => {
    const postgres = usePostgres();
    const made = usePendingSandboxHome();

    const withPassword = (url: string) => Object.assign(new URL(url), { password: PASSWORD }).href;
    const drop = (name: string) =>
      copyFileSync(join(SAMPLES, name), join(made().home, 'inbox', name));

    it('leaves the file in the inbox while the database is away, naming the server without its password', async () => {
      const { sandbox, home, env } = made();
      const database = await postgres.made('away');
      const { hostname, pathname } = new URL(database);
      const port = await closedPort();
      const away = Object.assign(new URL(withPassword(database)), { port: String(port) }).href;
      drop('payroll-2026-11.csv');

      const first = await runCli(['run'], { env: { ...env, PAYOUTS_JOURNAL: away } });
      expect(first.code, first.stderr).toBe(1);
      expect(first.stderr).toContain(
        `the journal's database postgres://postgres@${hostname}:${port}${pathname} cannot be reached (ECONNREFUSED`,
      );
      expect(`${first.stdout}${first.stderr}`).not.toContain(PASSWORD);
      expect(readdirSync(join(home, 'inbox'))).toEqual(['payroll-2026-11.csv']);
      expect(sandbox.ledger()).toHaveLength(0);
      // Nor was a journal made in the home instead.
      expect(existsSync(join(home, 'journal.db'))).toBe(false);

      // Every command that opens it says the same, and no password either.
      const status = await runCli(['status'], { env: { ...env, PAYOUTS_JOURNAL: away } });
      expect(status.code).toBe(1);
      const doctor = await runCli(['doctor'], { env: { ...env, PAYOUTS_JOURNAL: away } });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(
        /^FAIL {2}journal: the journal's database postgres:\/\/postgres@\S+ cannot be reached/m,
      );
      for (const output of [status, doctor]) {
        expect(`${output.stdout}${output.stderr}`).toContain(
          `postgres://postgres@${hostname}:${port}`,
        );
        expect(`${output.stdout}${output.stderr}`).not.toContain(PASSWORD);
      }
    });

    it('a new home whose database does not exist: exit 1 naming it and the createdb line, the file left in the inbox', async () => {
      const { sandbox, home, env } = made();
      const url = withPassword(postgres.url('never_made'));
      const { hostname, port, pathname } = new URL(url);
      const database = pathname.slice(1);
      const up = { ...env, PAYOUTS_JOURNAL: url };
      drop('payroll-2026-11.csv');
      const run = await runCli(['run'], { env: up });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `the journal's database postgres://postgres@${hostname}:${port}/${database} does not exist (3D000: database "${database}" does not exist): nothing was sent, and every file stays where it was. The database ${database} does not exist on its server, and payouts may not make one: make it, empty, as PostgreSQL's administrator (createdb --owner=postgres ${database}). Then run again`,
      );
      expect(readdirSync(join(home, 'inbox'))).toEqual(['payroll-2026-11.csv']);
      expect(sandbox.ledger()).toHaveLength(0);
      const doctor = await runCli(['doctor'], { env: up });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/^FAIL {2}journal: the journal's database \S+ does not exist/m);
      for (const output of [run, doctor])
        expect(`${output.stdout}${output.stderr}`).not.toContain(PASSWORD);
    });

    it('refuses a database a newer payouts wrote: exit 1, one sentence naming both versions, the file left in the inbox', async () => {
      const { sandbox, home, env } = made();
      const database = await postgres.made('newer');
      await (await openJournal({ kind: 'postgres', url: database })).close();
      const client = new pg.Client({ connectionString: database });
      await client.connect();
      await client.query('UPDATE schema_version SET version = 99');
      await client.end();
      drop('payroll-2026-11.csv');
      const { hostname, port, pathname } = new URL(database);
      const refused = await runCli(['run'], {
        env: { ...env, PAYOUTS_JOURNAL: withPassword(database) },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `payouts: the journal postgres://postgres@${hostname}:${port}${pathname} is at schema version 99, newer than this program knows (${LATEST_POSTGRES_SCHEMA}): use a newer payouts (payouts --version says which this is). Nothing was sent\n`,
      );
      expect(readdirSync(join(home, 'inbox'))).toEqual(['payroll-2026-11.csv']);
      expect(sandbox.ledger()).toHaveLength(0);
    });

    it('payouts doctor names the journal on PostgreSQL: its server, version and schema, never its password', async () => {
      const { env } = made();
      const database = await postgres.made('doctor');
      const { hostname, port, pathname } = new URL(database);
      const address = `postgres://postgres@${hostname}:${port}${pathname}`;
      const up = { ...env, PAYOUTS_JOURNAL: withPassword(database) };
      const before = await runCli(['doctor'], { env: up });
      expect(before.stdout).toMatch(
        new RegExp(`^ok {4}journal: none yet: the first run makes it in ${address}$`, 'm'),
      );
      await (await openJournal({ kind: 'postgres', url: database })).close();
      const after = await runCli(['doctor'], { env: up });
      expect(after.stdout).toMatch(
        new RegExp(
          `^ok {4}journal: ${address}: PostgreSQL \\d+\\.\\d+.* through node-postgres, schema ${LATEST_POSTGRES_SCHEMA} \\(current\\), has sent nothing yet$`,
          'm',
        ),
      );
      expect(after.stdout).toMatch(
        new RegExp(`^ {2}journal = "${address}" {2}\\(PAYOUTS_JOURNAL\\)$`, 'm'),
      );
      const json = await runCli(['doctor', '--json'], { env: up });
      for (const output of [before, after, json])
        expect(`${output.stdout}${output.stderr}`).not.toContain(PASSWORD);
    });

    it('a run pays a file once, and a second run of it nobody', async () => {
      const { sandbox, home, env } = made();
      const url = withPassword(await postgres.made('pays'));
      drop('payroll-2026-11.csv');
      const first = await runCli(['run'], { env: { ...env, PAYOUTS_JOURNAL: url } });
      expect(first.code, first.stderr).toBe(3); // pending: the sandbox does not settle them
      expect(`${first.stdout}${first.stderr}`).not.toContain(PASSWORD);
      expect(await journalState({ kind: 'postgres', url })).toBe('present');
      expect(existsSync(join(home, 'journal.db'))).toBe(false);
      expect(sandbox.ledger()).toHaveLength(6);
      expect(readdirSync(join(home, 'results'))).toHaveLength(1);

      drop('payroll-2026-11.csv');
      const again = await runCli(['run'], { env: { ...env, PAYOUTS_JOURNAL: url } });
      expect(`${again.stdout}${again.stderr}`).not.toContain(PASSWORD);
      expect(sandbox.ledger()).toHaveLength(6);
      expect([...ledgerCounts(sandbox).values()].every((n) => n === 1)).toBe(true);
    });

    it("a run as its own process, as cron starts it, prints no node-postgres warning: no query waits on another's connection", async () => {
      const { sandbox, env } = made();
      const url = await postgres.made('warnings');
      drop('payroll-2026-11.csv');
      // Node prints a deprecation once per process, to the process's own stderr.
      const { stderr } = await execFileAsync(process.execPath, [BIN, 'run'], {
        env: cleanEnv({ ...env, PAYOUTS_JOURNAL: url }),
        encoding: 'utf8',
      }).catch((error: { code: number; stderr: string }) => {
        expect(error.code, error.stderr).toBe(3); // pending: the sandbox does not settle them
        return error;
      });
      expect(sandbox.ledger()).toHaveLength(6);
      expect(stderr).not.toContain('DeprecationWarning');
    });
  },
);
