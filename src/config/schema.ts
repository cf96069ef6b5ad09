/**
 * Every configuration key: its type, range and documentation. The defaults live in
 * config/default.json (one file a person can read and copy); this schema validates
 * the merged result of defaults, `--config FILE` and `PAYOUTS_*` variables.
 */
import { z } from 'zod';
import { ENCODING_SETTINGS } from '../csv/encoding.js';
import { BALANCE_CHECKS } from '../engine/balance.js';
import { RESULT_DIALECTS } from '../results/result-file.js';
import { parseDurationMs } from './duration.js';

/** A duration above zero, in milliseconds once parsed (undici reads 0 as "wait forever"). */
const duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const ms = parseDurationMs(value);
  if (ms === undefined || ms === 0) {
    ctx.addIssue({
      code: 'custom',
      message: 'expected a duration above zero, such as 500ms, 30s or 5m',
    });
    return z.NEVER;
  }
  return ms;
});

/** A duration in milliseconds where zero means "not at all". */
const durationOrZero = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const ms = parseDurationMs(value);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as 0, 30s or 5m' });
    return z.NEVER;
  }
  return ms;
});

const cents = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const ConfigSchema = z.strictObject({
  home: z
    .string()
    .min(1)
    .describe(
      'Folder of the inbox, results and journal. Relative paths start at the working directory.',
    ),
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .describe(
      'Base address of the gateway. null runs against the embedded sandbox: no real money moves.',
    ),
  token: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'expected visible characters only (no spaces or line breaks)')
    .nullable()
    .describe(
      'Access token sent in Authorization. Required with baseUrl; never printed or logged.',
    ),
  authScheme: z
    .string()
    .regex(/^\S*$/, 'expected one word such as Bearer, or empty')
    .describe(
      'Word put before the token in Authorization, e.g. Bearer. Empty sends the bare token.',
    ),
  getTransactionMethod: z
    .enum(['GET', 'POST'])
    .describe(
      'HTTP method of the get-transaction endpoints (the interface names POST but shows GET).',
    ),
  connectTimeout: duration.describe('Time allowed to open a connection to the gateway.'),
  requestTimeout: duration.describe(
    'Time allowed for an answer; a create with no answer by then is treated as ambiguous and looked up, never re-sent blindly.',
  ),
  resendGrace: duration.describe(
    'Time after a send before a payout the gateway says it does not have (twice) may be sent again.',
  ),
  followTimeout: durationOrZero.describe(
    'How long `payouts run` follows pending payouts before it exits; the next run picks up what is still pending. 0: do not follow.',
  ),
  inboxSettle: duration.describe(
    'How long a file in the inbox must keep its size and time unchanged before the daemon takes it (a `<file>.done` beside it skips the wait).',
  ),
  inboxRescan: duration.describe(
    'How often the daemon looks at the whole inbox again, whatever file events said; also the length of each of its rounds of following.',
  ),
  postbackListen: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, such as 127.0.0.1:8787')
    .nullable()
    .describe(
      "Where the daemon listens for the gateway's postbacks (host:port); null: no receiver, payouts are followed by polling alone.",
    ),
  postbackPublicUrl: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .describe(
      "The receiver's address as the gateway reaches it (e.g. behind a proxy); null: http://<postbackListen>.",
    ),
  resultDialect: z
    .enum(RESULT_DIALECTS)
    .describe(
      'Result CSV dialect: excel (";", UTF-8 with BOM, CRLF, decimal comma: opens right in Excel set to Portuguese) or rfc4180 (",", UTF-8, CRLF, decimal point).',
    ),
  requireApproval: z
    .boolean()
    .describe(
      'Whether a validated file waits in awaiting-approval/ until a person approves it (moves it into approved/, or runs payouts approve FILE).',
    ),
  balanceCheck: z
    .enum(BALANCE_CHECKS)
    .describe(
      'Before sending, the balance against what is to be sent: block (an uncovered batch is held), warn, or off.',
    ),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(1024)
    .describe('Requests in flight at once, and the size of the connection pool.'),
  maxRequestsPerSecond: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .nullable()
    .describe(
      'Most gateway requests (sends, lookups, polls together) started in any one second; null for no cap.',
    ),
  encoding: z
    .enum(ENCODING_SETTINGS)
    .describe(
      'Text encoding of input files: auto (UTF-8 when the bytes are valid UTF-8, else Windows-1252), or forced.',
    ),
  maxPayoutCents: cents.describe(
    'Largest amount of one payout, in cents; a larger row is invalid.',
  ),
  maxFileCents: cents.describe(
    'Largest sum of the valid rows of one file, in cents; a larger file is held whole.',
  ),
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .describe('Largest input file, in bytes; a larger file is refused unread.'),
  logLevel: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .describe('Lowest level of log lines written to stderr.'),
});

export type Config = z.output<typeof ConfigSchema>;
export type ConfigKey = keyof Config;
export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as ConfigKey[];

/** `baseUrl` -> `PAYOUTS_BASE_URL` */
export function envName(key: string): string {
  return `PAYOUTS_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}
