/**
 * A file last changed long ago is asked about wherever it comes from (issue 29, case 9):
 * copied with its time kept (`cp -p`, a Samba share) into an inbox on another disk, and
 * in what `run --dry-run` and `validate` say before any run. Against a sandbox whose
 * ledger says who was paid.
 */
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli.js';
import { useTempFolder } from '../support/files.js';
import { TOKEN } from '../support/gateway.js';
import { sandboxHome } from '../support/home.js';

const DAY = 24 * 60 * 60 * 1000;
const PAYROLL =
  'Nome,CPF,E-mail,Celular,Chave Pix,Valor\r\n' +
  'Ana Souza,529.982.247-25,ana@example.com,(11) 98765-4321,ana@example.com,"3.000,00"\r\n';
const AGE = 'it was last changed 517 days ago';
/** A disk other than the temp folder's, where this machine has one. */
const OTHER_DISK = '/dev/shm';
const otherDisk = (() => {
  try {
    return statSync(OTHER_DISK).dev !== statSync(tmpdir()).dev;
  } catch {
    return false;
  }
})();

describe('an old file is asked about', () => {
  const folder = useTempFolder();
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  async function home() {
    sandbox = await startSandbox({ token: TOKEN });
    return sandboxHome(folder(), sandbox.url, {
      PAYOUTS_FOLLOW_TIMEOUT: '0',
      PAYOUTS_INBOX_SETTLE: '1ms',
    });
  }
  /** Writes the payroll as a copy that kept its time: last changed 517 days ago. */
  const dropOld = (path: string) => {
    writeFileSync(path, PAYROLL);
    const changed = new Date(Date.now() - 517 * DAY);
    utimesSync(path, changed, changed);
  };

  it.skipIf(!otherDisk)('in an inbox on another disk: held whole, nothing sent', async () => {
    const { env } = await home();
    const inbox = mkdtempSync(join(OTHER_DISK, 'payouts-inbox-'));
    try {
      dropOld(join(inbox, 'folha.csv'));
      const run = await runCli(['run', '--inbox', inbox], { env });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toContain(AGE);
      expect(sandbox?.ledger()).toEqual([]);
    } finally {
      rmSync(inbox, { recursive: true, force: true });
    }
  });

  it('by run --dry-run and by validate, before any run takes it', async () => {
    const { home: path, env } = await home();
    expect((await runCli(['run'], { env })).code).toBe(0);
    const file = join(path, 'inbox', 'folha.csv');
    dropOld(file);
    const rehearsed = await runCli(['run', '--dry-run'], { env });
    expect(rehearsed.code).toBe(2);
    expect(rehearsed.stdout).toMatch(/^folha\.csv: would send 0 \(R\$ 0,00\)/m);
    expect(rehearsed.stdout).toContain(AGE);
    const validated = await runCli(['validate', file], { env });
    expect(validated.stdout).toContain(AGE);
    expect(sandbox?.ledger()).toEqual([]);
  });
});
