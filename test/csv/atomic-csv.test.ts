import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAtomicCsv } from '../../src/csv/atomic-csv.js';
import { useTempFolder } from '../support/files.js';

describe('openAtomicCsv', () => {
  const folder = useTempFolder();

  it('gives the file its name only once it is complete', async () => {
    const path = join(folder(), 'out.csv');
    const file = openAtomicCsv(path, ['name', 'cpf']);
    await file.write(['Ana Souza', '52998224725']);
    expect(existsSync(path)).toBe(false);
    await file.commit();
    expect(readFileSync(path, 'utf8')).toBe('name,cpf\nAna Souza,52998224725\n');
    expect(readdirSync(folder())).toEqual(['out.csv']);
  });

  it('leaves no temporary file with the rows behind when the name cannot be taken', async () => {
    const path = join(folder(), 'taken');
    const file = openAtomicCsv(path, ['name', 'cpf']);
    await file.write(['Ana Souza', '52998224725']);
    mkdirSync(join(path, 'inside'), { recursive: true }); // a full folder now holds the name
    await expect(file.commit()).rejects.toThrow();
    expect(readdirSync(folder())).toEqual(['taken']);
  });
});
