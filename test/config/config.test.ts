import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatDuration, parseDurationMs } from '../../src/config/duration.js';
import {
  ConfigError,
  envLayer,
  loadConfig,
  resolveConfig,
  tokenOfFileText,
} from '../../src/config/load.js';
import {
  REFERENCE_END,
  REFERENCE_START,
  configReference,
  normaliseReference,
} from '../../src/config/reference.js';
import { CONFIG_KEYS, envName } from '../../src/config/schema.js';
import defaults from '../../config/default.json' with { type: 'json' };

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseDurationMs', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['20d', 1_728_000_000],
    [' 2 s ', 2000],
    ['250', 250],
    [250, 250],
    ['5 minutes', undefined],
    ['-1s', undefined],
    ['1.5s', undefined],
    [-5, undefined],
    [1.5, undefined],
  ])('%j -> %j', (input, expected) => {
    expect(parseDurationMs(input)).toBe(expected);
  });
});

describe('formatDuration', () => {
  it.each([
    [2000, '2s'],
    [90_000, '90s'],
    [300_000, '5m'],
    [7_200_000, '2h'],
    [432_000_000, '5d'],
    [1500, '1500ms'],
    [0, '0ms'],
  ])('%j -> %j, which reads back the same', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDurationMs(text)).toBe(ms);
  });
});

describe('envName', () => {
  it.each([
    ['baseUrl', 'PAYOUTS_BASE_URL'],
    ['token', 'PAYOUTS_TOKEN'],
    ['home', 'PAYOUTS_HOME'],
    ['concurrency', 'PAYOUTS_CONCURRENCY'],
    ['getTransactionMethod', 'PAYOUTS_GET_TRANSACTION_METHOD'],
  ])('%s -> %s', (key, name) => {
    expect(envName(key)).toBe(name);
  });
});

describe('config', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'payouts-config-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const file = (values: unknown) => {
    const path = join(folder, 'config.json');
    writeFileSync(path, typeof values === 'string' ? values : JSON.stringify(values));
    return path;
  };

  it('config/default.json gives every key of the schema, and nothing else', () => {
    expect(Object.keys(defaults).sort()).toEqual([...CONFIG_KEYS].sort());
  });

  it('loads the defaults, with durations in milliseconds', () => {
    expect(loadConfig({ env: {} }).config).toEqual({
      home: './payouts-data',
      sharedGroup: null,
      baseUrl: null,
      token: null,
      tokenFile: null,
      gateway: 'baseUrl',
      authScheme: '',
      getTransactionMethod: 'GET',
      connectTimeout: 5000,
      requestTimeout: 30_000,
      resendGrace: 120_000,
      followTimeout: 180_000,
      pendingAlertAfter: 3_600_000,
      inboxSettle: 2000,
      inboxRescan: 5000,
      postbackListen: null,
      postbackPublicUrl: null,
      resultDialect: 'excel',
      timeZone: 'America/Sao_Paulo',
      language: null,
      requireApproval: false,
      balanceCheck: 'block',
      feePerPayoutCents: 0,
      duplicateWindow: 20 * 86_400_000,
      sameNameNewBatchAfter: null,
      concurrency: 16,
      maxRequestsPerSecond: null,
      maxGatewayPause: 60_000,
      encoding: 'auto',
      headings: {},
      recipientEmail: null,
      recipientPhone: null,
      maxPayoutCents: 10_000_000,
      maxFileCents: 1_000_000_000,
      maxFileBytes: 536_870_912,
      logLevel: 'info',
      journal: null,
      maxClockSkew: 30_000,
      hostName: null,
      fourEyes: false,
      approvers: [],
      secondApprovalAbove: null,
      dailyLimit: null,
    });
  });

  it.each([
    'postgres://payouts:s3cr3t-pw@db.example.com:5432/payouts',
    'postgresql://payouts@10.0.0.7/payouts?sslmode=require',
  ])('takes a PostgreSQL URL as the journal: %s', (url) => {
    expect(loadConfig({ env: { PAYOUTS_JOURNAL: url } }).config.journal).toBe(url);
  });

  it.each([
    'mysql://payouts:s3cr3t-pw@db.example.com/payouts',
    'postgres:/payouts:s3cr3t-pw@db.example.com/payouts',
    '/var/lib/payouts/journal.db',
  ])(
    'refuses a journal that is not a PostgreSQL URL, naming the setting, never its password: %j',
    (value) => {
      const problems = problemsOf(() => loadConfig({ env: { PAYOUTS_JOURNAL: value } })).join('\n');
      expect(problems).toMatch(
        /^journal \(from PAYOUTS_JOURNAL\): expected a PostgreSQL URL \(postgres:\/\/USER@HOST:PORT\/DATABASE\)/,
      );
      expect(problems).not.toContain('s3cr3t');
    },
  );

  it('takes a host name for claims and the home lock, and refuses one with spaces', () => {
    expect(loadConfig({ env: { PAYOUTS_HOST_NAME: 'pay-2.example' } }).config.hostName).toBe(
      'pay-2.example',
    );
    expect(
      problemsOf(() => loadConfig({ env: { PAYOUTS_HOST_NAME: 'pay 2' } })).join('\n'),
    ).toMatch(/^hostName = "pay 2" \(from PAYOUTS_HOST_NAME\): expected a host name/);
  });

  it('lets a --config file override the defaults, and the environment override both', () => {
    const configFile = file({
      concurrency: 8,
      requestTimeout: '10s',
      baseUrl: 'https://gw.example.com/v1',
      token: 'from-file',
    });
    const { config, sources } = loadConfig({
      configFile,
      env: { PAYOUTS_CONCURRENCY: '32', PAYOUTS_TOKEN: 'from-env', PATH: '/bin' },
    });
    expect(config).toMatchObject({
      concurrency: 32,
      requestTimeout: 10_000,
      baseUrl: 'https://gw.example.com/v1',
      token: 'from-env',
    });
    // Where each value came from, as payouts doctor shows it.
    expect(sources).toMatchObject({
      concurrency: 'PAYOUTS_CONCURRENCY',
      token: 'PAYOUTS_TOKEN',
      requestTimeout: `--config ${configFile}`,
      baseUrl: `--config ${configFile}`,
      home: 'config/default.json',
    });
  });

  it('reads environment text as the key needs it', () => {
    const { config } = loadConfig({
      env: {
        PAYOUTS_CONNECT_TIMEOUT: '750ms',
        PAYOUTS_AUTH_SCHEME: 'Bearer',
        PAYOUTS_HOME: '/srv/payouts',
        PAYOUTS_LOG_LEVEL: '',
      },
    });
    expect(config).toMatchObject({
      connectTimeout: 750,
      authScheme: 'Bearer',
      home: '/srv/payouts',
      logLevel: 'info',
    });
  });

  it.each([
    [{ PAYOUTS_CONCURRENCY: 'lots' }, /^concurrency = "lots" \(from PAYOUTS_CONCURRENCY\)/],
    [{ PAYOUTS_CONCURRENCY: '0' }, /^concurrency = 0 \(from PAYOUTS_CONCURRENCY\)/],
    [
      { PAYOUTS_REQUEST_TIMEOUT: 'soon' },
      /requestTimeout = "soon" \(from PAYOUTS_REQUEST_TIMEOUT\): expected a duration/,
    ],
    [{ PAYOUTS_BASE_URL: 'ftp://x' }, /^baseUrl = "ftp:\/\/x"/],
    [{ PAYOUTS_TIME_ZONE: 'Brasilia' }, /^timeZone = "Brasilia" .*expected an IANA time zone/],
    [{ PAYOUTS_RECIPIENT_EMAIL: 'folha@' }, /^recipientEmail = "folha@" .*expected an e-mail/],
    [{ PAYOUTS_RECIPIENT_PHONE: '3333-4444' }, /^recipientPhone = "3333-4444" .*area code/],
    [{ PAYOUTS_GET_TRANSACTION_METHOD: 'PUT' }, /^getTransactionMethod/],
    [
      { PAYOUTS_TOKNE: 'x' },
      /unknown key "PAYOUTS_TOKNE" in the environment variable PAYOUTS_TOKNE/,
    ],
    [{ PAYOUTS_BASE_URL: 'https://gw.example.com' }, /token is required when baseUrl is set/],
    [{ PAYOUTS_REQUEST_TIMEOUT: '0s' }, /requestTimeout = "0s" .*above zero/],
    [{ PAYOUTS_CONNECT_TIMEOUT: '0' }, /connectTimeout = 0 .*above zero/],
    [
      { PAYOUTS_TOKEN: 'abc def' },
      /^token \(from PAYOUTS_TOKEN\): expected visible characters only/,
    ],
    [
      { PAYOUTS_BASE_URL: 'ftp://user:pw@gw.example.com' },
      /^baseUrl = "ftp:\/\/\*\*\*@gw\.example\.com"/,
    ],
  ])('names the offending key: %j', (env, message) => {
    const problems = problemsOf(() => loadConfig({ env }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('names an unknown key in the --config file, and where it was', () => {
    const configFile = file({ concurency: 4 });
    expect(problemsOf(() => loadConfig({ configFile, env: {} }))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^unknown key "concurency" in --config ${configFile.replace(/[.\\/]/g, '\\$&')}`,
        ),
      ),
    ]);
  });

  it('says when the --config file is missing or not JSON', () => {
    expect(
      problemsOf(() => loadConfig({ configFile: join(folder, 'nope.json'), env: {} }))[0],
    ).toMatch(/cannot read .*nope\.json \(ENOENT\)/);
    expect(
      problemsOf(() => loadConfig({ configFile: file('{"concurrency": 4,'), env: {} }))[0],
    ).toMatch(/is not valid JSON/);
    expect(problemsOf(() => loadConfig({ configFile: file('[1]'), env: {} }))[0]).toMatch(
      /must hold a JSON object/,
    );
  });

  it('never shows an authScheme, which may carry the token by mistake', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: { PAYOUTS_AUTH_SCHEME: 'Bearer s3cr3t-tok' } }),
    );
    expect(problems.join('\n')).toMatch(
      /^authScheme \(from PAYOUTS_AUTH_SCHEME\): expected one word/,
    );
    expect(problems.join('\n')).not.toContain('s3cr3t');
  });

  it.each([
    [
      '127.0.0.1:8787',
      null,
      'https://gateway.example.com/api',
      /postbackListen 127\.0\.0\.1:8787 is an address the gateway at gateway\.example\.com cannot reach: set postbackPublicUrl/,
    ],
    [
      '0.0.0.0:8787',
      null,
      'https://gateway.example.com',
      /postbackListen 0\.0\.0\.0:8787 is an address the gateway/,
    ],
    [
      '[::1]:8787',
      null,
      'https://gateway.example.com',
      /postbackListen \[::1\]:8787 is an address/,
    ],
    [
      '0.0.0.0:8787',
      'http://localhost:8787',
      'https://gateway.example.com',
      /postbackPublicUrl http:\/\/localhost:8787 is an address/,
    ],
    ['127.0.0.1:8787', null, 'http://127.0.0.1:9000', undefined],
    ['0.0.0.0:8787', 'https://payouts.example.com/hooks', 'https://gateway.example.com', undefined],
    ['10.0.0.5:8787', null, 'https://gateway.example.com', undefined],
  ])(
    'postbackListen %s, postbackPublicUrl %s, baseUrl %s: a postback address the gateway cannot reach is refused',
    (listen, publicUrl, baseUrl, refused) => {
      const env = {
        PAYOUTS_POSTBACK_LISTEN: listen,
        PAYOUTS_POSTBACK_PUBLIC_URL: publicUrl ?? '',
        PAYOUTS_BASE_URL: baseUrl,
        PAYOUTS_TOKEN: 't',
      };
      if (refused === undefined) expect(loadConfig({ env }).config.postbackListen).toBe(listen);
      else expect(problemsOf(() => loadConfig({ env })).join('\n')).toMatch(refused);
    },
  );

  it('reads the token from tokenFile, for every command that may reach the gateway', () => {
    const tokenFile = join(folder, 'payouts.secret');
    writeFileSync(tokenFile, 'live-token-42\n');
    const env = { PAYOUTS_BASE_URL: 'https://gw.example.com', PAYOUTS_TOKEN_FILE: tokenFile };
    const { config, sources } = loadConfig({ env });
    expect(config.token).toBe('live-token-42');
    expect(sources.token).toBe(`tokenFile ${tokenFile}`);
  });

  it('leaves tokenFile unread for a command that reaches no gateway (validate): an accountant may not read it', () => {
    const env = {
      PAYOUTS_BASE_URL: 'https://gw.example.com',
      PAYOUTS_TOKEN_FILE: join(folder, 'unreadable.secret'),
    };
    expect(loadConfig({ env, readsToken: false }).config.token).toBeNull();
    expect(problemsOf(() => loadConfig({ env }))).toEqual([
      `cannot read the token file ${env.PAYOUTS_TOKEN_FILE} (ENOENT), named by tokenFile: the user running payouts must read it (root:payouts 0640 on a server). Nothing was done`,
    ]);
  });

  it('refuses a token in two places, and a token file that holds more than the token', () => {
    const tokenFile = join(folder, 'payouts.secret');
    writeFileSync(tokenFile, 'PAYOUTS_TOKEN=live-token-42\n');
    expect(
      problemsOf(() => loadConfig({ env: { PAYOUTS_TOKEN: 'a', PAYOUTS_TOKEN_FILE: tokenFile } })),
    ).toEqual([
      'token (from PAYOUTS_TOKEN) and tokenFile (from PAYOUTS_TOKEN_FILE) are both set: keep the token in the tokenFile alone, and remove PAYOUTS_TOKEN',
    ]);
    expect(problemsOf(() => loadConfig({ env: { PAYOUTS_TOKEN_FILE: tokenFile } }))).toEqual([
      `the token file ${tokenFile} must hold the token alone, on one line of visible characters (no name=, no quotes, no spaces)`,
    ]);
  });

  it.each([
    ['live-token-42\n', 'live-token-42'],
    ['\r\n  live-token-42  \r\n\r\n', 'live-token-42'],
    ['abc==\n', 'abc=='],
    ['', undefined],
    ['one\ntwo\n', undefined],
    ['two words\n', undefined],
    ['PAYOUTS_TOKEN=live-token-42\n', undefined],
  ])('the token of a token file holding %j is %j', (text, token) => {
    expect(tokenOfFileText(text)).toBe(token);
  });

  it('never shows the token in a message', () => {
    const problems = problemsOf(() =>
      resolveConfig([{ source: 'test', values: { ...defaults, token: 12345678 } }, envLayer({})]),
    );
    expect(problems.join('\n')).toMatch(/^token \(from test\)/);
    expect(problems.join('\n')).not.toContain('12345678');
  });
});

describe('the configuration reference (docs/configuration.md)', () => {
  it('is the one the schema makes (npm run docs writes it)', () => {
    const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const start = readme.indexOf(REFERENCE_START);
    const end = readme.indexOf(REFERENCE_END);
    expect(start, 'docs/configuration.md has the reference markers').toBeGreaterThan(0);
    const written = readme.slice(start + REFERENCE_START.length, end);
    expect(normaliseReference(written)).toBe(normaliseReference(configReference()));
  });

  it('has an item for every key, with its variable, its default and a meaning', () => {
    const rows = configReference().split('\n');
    expect(rows).toHaveLength(CONFIG_KEYS.length);
    for (const [index, key] of CONFIG_KEYS.entries()) {
      const value = JSON.stringify((defaults as Record<string, unknown>)[key]);
      expect(rows[index]).toMatch(
        new RegExp(`^- \`${key}\` \\(\`${envName(key)}\`, default \`.+\`\\): \\S.{20,}$`),
      );
      expect(rows[index]).toContain(`\`${value}\``);
    }
  });
});
