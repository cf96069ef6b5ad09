import { describe, expect, it } from 'vitest';
import { postgresAddress, postgresDatabase } from '../../src/journal/location.js';

describe('where a PostgreSQL journal is, as a person reads it', () => {
  it.each([
    [
      'postgres://payouts:pw@db.internal:5432/payouts',
      'postgres://payouts@db.internal:5432/payouts',
    ],
    ['postgresql://db.internal/payouts?password=pw', 'postgresql://db.internal/payouts'],
    // A socket folder as the host, percent-encoded, or as the `host` parameter: said as libpq reads it.
    [
      'postgres://payouts:pw@%2Ftmp%2Fsock/payouts',
      'postgres:///payouts?host=/tmp/sock&user=payouts',
    ],
    [
      'postgres://payouts:pw@%2Fvar%2Frun%2Fpostgresql:5433/payroll',
      'postgres:///payroll?host=/var/run/postgresql&port=5433&user=payouts',
    ],
    [
      'postgresql:///payouts?host=/var/run/postgresql',
      'postgresql:///payouts?host=/var/run/postgresql',
    ],
    [
      'postgres:///payouts?host=/tmp/sock&user=payouts&password=pw&port=5433',
      'postgres:///payouts?host=/tmp/sock&port=5433&user=payouts',
    ],
    ['postgres:///payouts?host=db.internal&user=payouts', 'postgres://payouts@db.internal/payouts'],
  ])('%s is %s', (url, address) => {
    expect(postgresAddress(url)).toBe(address);
    expect(postgresAddress(address)).toBe(address);
    expect(postgresAddress(url)).not.toContain('pw');
  });

  it.each([
    ['postgres://payouts@db.internal:5432/payroll', { database: 'payroll', user: 'payouts' }],
    ['postgres:///payroll?host=/tmp/sock&user=payouts', { database: 'payroll', user: 'payouts' }],
    ['postgres:///payroll?host=/tmp/sock', { database: 'payroll', user: undefined }],
  ])('%s names the database and its user: %j', (address, named) => {
    expect(postgresDatabase(address)).toEqual(named);
  });
});
