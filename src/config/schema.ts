/**
 * Every configuration key: its type, range and documentation. The defaults live in
 * config/default.json (one file a person can read and copy); this schema validates
 * the merged result of defaults, `--config FILE` and `PAYOUTS_*` variables.
 */
import { z } from 'zod';
import { parseReais } from '../csv/amount.js';
import { ENCODING_SETTINGS } from '../csv/encoding.js';
import { headingMapProblems } from '../csv/header.js';
import { isEmail } from '../csv/pix-key.js';
import { readPersonPhone } from '../csv/row.js';
import { BALANCE_CHECKS } from '../engine/balance.js';
import { LANGUAGES } from '../messages/language.js';
import { RESULT_DIALECTS } from '../results/result-file.js';
import { parseDurationMs } from './duration.js';
import { isPostgresUrl } from '../journal/location.js';

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

/** Where payouts go: the gateway at `baseUrl`, or the embedded sandbox, asked for on purpose. */
export const GATEWAY_CHOICES = ['baseUrl', 'sandbox'] as const;

const cents = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** An amount in reais (`50000`, `"50.000,00"`), in cents once parsed; null: none. */
const reais = z
  .union([z.number().positive(), z.string()])
  .nullable()
  .transform((value, ctx) => {
    if (value === null) return null;
    if (typeof value === 'number') return Math.round(value * 100);
    const reading = parseReais(value);
    if (reading.ok) return reading.cents;
    ctx.addIssue({
      code: 'custom',
      message: 'expected an amount in reais, such as 50000 or 50.000,00',
    });
    return z.NEVER;
  });

export const ConfigSchema = z.strictObject({
  home: z
    .string()
    .min(1)
    .describe(
      'folder of the inbox, results and journal; relative paths start at the working directory',
    ),
  sharedGroup: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'expected a group name, like accounting, or its number')
    .nullable()
    .describe(
      'group (name or number) that shares the home with the user running payouts, such as accounting: it may drop files in `inbox/` and move them through `awaiting-approval/` and `approved/` (mode 2770; under `fourEyes` 3770, sticky, so nobody renames or deletes a file of another person there), and read `results/`, `archive/`, `rejected/` and `processing/` (2750); the home is 0750; the journal, its marker and the postback secret stay owner-only (0600). Set at every start, so a folder changed by hand is set right; an `--inbox` outside the home is left alone. `null`: every folder under the home owner-only (0700), also set at every start, for homes reached only through the service user',
    ),
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .describe(
      'base address of the gateway (http or https, may include a path); `null`: none, and then `run`, `watch`, `reconcile`, `status`, `approve` and `reject` refuse to start unless `gateway` is `sandbox`, while `balance`, `get` and `cashin` use the embedded sandbox and say so',
    ),
  token: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'expected visible characters only (no spaces or line breaks)')
    .nullable()
    .describe(
      'access token sent in `Authorization`; required with `baseUrl` (or `tokenFile`); never printed, logged or written',
    ),
  tokenFile: z
    .string()
    .min(1)
    .nullable()
    .describe(
      'file holding the token alone (one line), so that the other settings may be in a file the accountants read: on a server `/etc/payouts.secret`, root:payouts 0640, beside `/etc/payouts.env`, root:accounting 0640; read by every command that may reach the gateway, never by `validate`, which then checks a file with the real settings as any member of `sharedGroup`; `null`: the token is `token`. Never both',
    ),
  gateway: z
    .enum(GATEWAY_CHOICES)
    .describe(
      '`baseUrl`: the gateway at `baseUrl`; `sandbox`: the embedded sandbox on purpose, where no real money moves (also `--sandbox` on the command line), for trying the commands that move or report payouts; never together with a `baseUrl`',
    ),
  authScheme: z
    .string()
    .regex(/^\S*$/, 'expected one word such as Bearer, or empty')
    .describe('word put before the token, e.g. `Bearer`; empty sends the bare token'),
  getTransactionMethod: z
    .enum(['GET', 'POST'])
    .describe('method of the get-transaction endpoints, `GET` or `POST`'),
  connectTimeout: duration.describe(
    'time allowed to open a connection; a refused or timed-out connect sent nothing',
  ),
  requestTimeout: duration.describe(
    'time allowed for the whole answer, headers and body, however slowly it comes: every request ends at the latest connectTimeout + requestTimeout after it starts (its deadline); a create with no complete answer is ambiguous, and looked up',
  ),
  resendGrace: duration.describe(
    "time after the end of a send's lease (a request's deadline with a margin: connectTimeout + 2 × requestTimeout + 2s) before a payout the gateway says it does not have (twice) may be sent again, with its own orderId: a request may still be in flight at the gateway when the first lookup misses it, or leave late from a process paused while it held the row",
  ),
  followTimeout: durationOrZero.describe(
    'how long `payouts run` follows pending payouts (polling each by transactionId) before it writes results and exits, the results counted in: a run with payouts to follow writes them first, then follows for this long less the time that took; what is still pending is picked up by the next run; `0` does not follow; `--follow-timeout` overrides it for one run',
  ),
  pendingAlertAfter: duration.describe(
    'how long a payout may stay `pending` at the gateway, counted from its send, before it needs a person: Pix settles in seconds, so one pending longer makes `payouts run` exit 2 with its age in the summary, on stderr (even with `--quiet`) and in `payouts status`, instead of exit 3 (run again later) run after run',
  ),
  inboxSettle: duration.describe(
    'how long a file in the inbox must keep its size and modification time, on our clock, before it is taken, so a file still being copied is never read half: `payouts watch` watches it that long; `payouts run` takes a file last changed that long ago, and looks again that much later (once, when 30s or less) at the others, such as a file whose time is ahead of ours; a `<file>.done` beside it skips the wait. `payouts watch` also makes its next pass, which writes the results, this long (or `inboxRescan`, if shorter) after the first payout settled since its last pass: one pass for the payouts settling meanwhile, not one each',
  ),
  inboxRescan: duration.describe(
    'how often `payouts watch` looks at the whole inbox again whatever file events said (events are hints: some filesystems, such as network shares, send none); also the length of each round of following',
  ),
  postbackListen: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, such as 127.0.0.1:8787')
    .nullable()
    .describe(
      "`host:port` where `payouts watch` receives the gateway's postbacks (on a PostgreSQL journal, also while it waits for another host: the host following the payout is told); `null`: no receiver, payouts are followed by polling alone",
    ),
  postbackPublicUrl: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .describe(
      "the receiver's address as the gateway reaches it (a proxy, a public name); `null`: `http://<postbackListen>`. The secret path is added to it",
    ),
  resultDialect: z
    .enum(RESULT_DIALECTS)
    .describe(
      'dialect of result files and `validate --report`: `excel` (`;`, UTF-8 with BOM, CRLF, decimal commas, CPF/CNPJ punctuated and phone keys as `(11) 98765-4321` so they stay text: opens right in a Brazilian Excel) or `rfc4180` (`,`, UTF-8 without BOM, CRLF, decimal points, bare digits: for programs)',
    ),
  timeZone: z
    .string()
    .refine((zone) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: zone });
        return true;
      } catch {
        return false;
      }
    }, 'expected an IANA time zone, like America/Sao_Paulo or America/Manaus')
    .describe(
      'time zone of both times in result files, `createdAt` and `processedAt` (which the gateway writes in UTC without a zone): in the `excel` dialect as a date-time a spreadsheet reads (`2026-11-23 17:41:07`), in `rfc4180` with its offset (`2026-11-23T17:41:07-03:00`); `payouts status` writes its times in it too, with the offset',
    ),
  language: z
    .enum(LANGUAGES)
    .nullable()
    .describe(
      'language of what accountants read: `pt-BR` or `en`; `null`: from the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`: Portuguese for a `pt` locale, else English). It covers `validate` (its summary, the message of each row and file, and its `--report`), the approval report, what `run`, `approve`, `reject`, `retry` and `template` print (their errors too), the releases `status --approvals` lists, the lines `watch` logs on each file, the reason file of a rejected file, `--help` (of the program and of each command: what it does, its options and examples; the flags stay as they are typed), the line said of a command line that cannot be taken (an unknown option, a missing argument) and what the journal itself says to any command (a journal written by a newer payouts, a change it refuses), and result files in the `excel` dialect (headings, status words, and every message of ours: an invalid line, a row held by the rules on who is paid or with its whole file, a row taken over by a later file or sent again by `payouts retry`, a row whose covering payout came back; the `rfc4180` dialect is for programs and stays English, as does `--json`). `--help` knows it before reading the command: from the `--config` file, the settings file (`--settings-file` or `PAYOUTS_SETTINGS_FILE`) and `PAYOUTS_LANGUAGE`, else from the locale; when those settings cannot be read, from the locale, and the command then says what is wrong with them. The answers of the gateway (verbatim), the rest of `status`, `reconcile`, and the rest of the operator logs are English',
    ),
  requireApproval: z
    .boolean()
    .describe(
      'whether a validated file waits in `awaiting-approval/` (with a `.report.txt` of what would be sent) until a person moves it into `approved/` or runs `payouts approve FILE` (an answer to its held rows, such as `payouts approve FILE --new-batch`, approves it too once it frees a row); `payouts reject FILE --reason …` turns it down',
    ),
  balanceCheck: z
    .enum(BALANCE_CHECKS)
    .describe(
      'before sending, the balance (read as cents) against what each batch has to send, oldest batch first: `block` holds a batch it does not cover (its rows `held`, checked again on every run), `warn` sends anyway and says so, `off` does not look',
    ),
  feePerPayoutCents: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(
      "your contract's Pix fee per payout, in cents; the balance check adds it to each payout's value, so a batch funded for its values but not its fees is held, not failed at its tail. The gateway's `tax` answers are reported verbatim and never computed with",
    ),
  duplicateWindow: duration.describe(
    'how far back a row is compared with the payouts of other files: a row with the same document and amount as a payout that was paid or may still be paid within this time is not sent on its own (held as a possible duplicate, or `covered` in a corrected copy). The time counts from when that payout was sent or settled, whichever is later, not from when its file arrived. A file last changed longer ago than this when it first arrives is held whole for a person, saying its age. 20 days is shorter than the time between two monthly paydays and longer than the time in which a re-export is noticed. A row with a reference (an NF, pedido or competência column) is compared by its reference instead, at any age, and by this window only against payouts without one; without a reference column, use `5d` for weekly routines and `12h` for daily ones',
  ),
  sameNameNewBatchAfter: duration
    .nullable()
    .describe(
      'a file named as an earlier batch that repeats any of its rows is held whole, whatever its age, until a person says whether it is new (`payouts approve FILE --new-batch`); for export programs that reuse one name every month, this age makes such a file a new batch on its own; `null`: always ask',
    ),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(1024)
    .describe('requests in flight at once, and the size of the connection pool (1 to 1024)'),
  maxRequestsPerSecond: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .nullable()
    .describe(
      'most gateway requests started in any one second (a sliding window), sends, lookups and polls together; `null` for no cap (the interface publishes no rate limit, and a 429 pauses the whole pool anyway). On a PostgreSQL journal it is the cap of all hosts together: each host sending takes an equal part, and a host that starts sending beside others waits about 1.75 s while they make room',
    ),
  maxGatewayPause: duration.describe(
    'longest wait a 429 from the gateway imposes, whatever its `Retry-After` asks: no request starts meanwhile (on a PostgreSQL journal, on any host), and the first one after it learns whether the gateway still refuses',
  ),
  encoding: z
    .enum(ENCODING_SETTINGS)
    .describe(
      'text encoding of input files: `auto` (UTF-8 when the bytes are valid UTF-8, else Windows-1252; a byte-order mark always wins), `utf-8`, `windows-1252` or `latin1`',
    ),
  headings: z
    .record(z.string(), z.string())
    .superRefine((map, ctx) => {
      for (const message of headingMapProblems(map)) ctx.addIssue({ code: 'custom', message });
    })
    .describe(
      'headings of your own read as our columns, such as `{"Valor Líquido": "amount", "Favorecido": "name"}`: each heading (matched as ours are, case, accents and spacing aside) to one of `orderId`, `name`, `email`, `phone`, `cpfCnpj`, `pixKeyType`, `pixKey`, `amount` (reais), `value` (cents) or `reference` (a payment\'s reference, as an NF or a competência column: `{"Protocolo": "reference"}`); a heading that is already ours for another column is refused. In the environment, as JSON: `PAYOUTS_HEADINGS=\'{"Valor Líquido":"amount"}\'`',
    ),
  recipientEmail: z
    .string()
    .refine(isEmail, 'expected an e-mail address, like folha@empresa.com.br')
    .nullable()
    .describe(
      "e-mail sent as the recipient's contact for rows that have none (no e-mail column, or an empty cell) and whose Pix key is not an e-mail; the gateway requires one per payout, and it never decides who is paid (the Pix key and document do); `null`: such a row is invalid, with why",
    ),
  recipientPhone: z
    .string()
    .refine(
      (text) => readPersonPhone(text) !== undefined,
      'expected a phone number with area code, like (11) 3333-4444',
    )
    .nullable()
    .describe(
      "phone sent as the recipient's contact for rows that have none and whose Pix key is not a phone (as `recipientEmail`); `null`: such a row is invalid, with why",
    ),
  maxPayoutCents: cents.describe(
    'largest amount of one payout, in cents (R$ 100.000,00); a larger row is invalid',
  ),
  maxFileCents: cents.describe(
    'largest sum of the valid rows of one file, in cents (R$ 10.000.000,00); a larger file is held whole',
  ),
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .describe('largest input file in bytes (512 MiB); a larger file is refused unread'),
  logLevel: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .describe('lowest level of the pino log lines on stderr (`silent` for none)'),
  journal: z
    .string()
    .refine(
      isPostgresUrl,
      'expected a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE), or nothing for the SQLite journal in the home',
    )
    .nullable()
    .describe(
      'where the journal is: `null`, the SQLite file `journal.db` in the home, for one host; a PostgreSQL URL (`postgres://payouts@db.example.com:5432/payouts`, or `postgresql://`), one database the hosts sharing the home keep their journal in, working at once (docs/several-hosts.md). Its password is never printed (`payouts doctor` and every message name the server as `postgres://USER@HOST:PORT/DATABASE`); keep it in the environment file beside the token, or in `~/.pgpass`',
    ),
  maxClockSkew: duration.describe(
    "how far this host's clock may read from the clock of the journal's database (PostgreSQL only), measured when a command opens the journal and again at each heartbeat of the home's lock: a host further off claims and sends nothing (`payouts run` exits 1 naming its offset, `payouts watch` waits, out of the way of the other hosts, until its clock is right), since hosts date the journal's entries by their own clocks; within it, the other hosts allow twice it (two hosts on either side) before a clock reads behind the journal, and the resend grace grows by twice it. 30s: far beyond what NTP keeps (milliseconds), and twice it still under the default resendGrace (2m)",
  ),
  hostName: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected a host name, like pay-1 or pay-1.example.com')
    .nullable()
    .describe(
      "this host's name in the journal, written into each claim it takes and into the home's lock, so that hosts sharing one journal tell each other apart; `null`: the machine's hostname",
    ),
  fourEyes: z
    .boolean()
    .describe(
      'four eyes: every file waits for approval (as with `requireApproval`), and only a person named in `approvers`, other than the one who dropped it, releases it, under their own login: by leaving `FILE.aprovado` (or `FILE.NAME.aprovado`) holding the approval code of its `.report.txt` in `awaiting-approval/`, or by `payouts approve FILE` run as themselves. A file moved into `approved/` by hand releases nothing and goes back to wait; the service user and root never approve. A dropped file, or an approval, counts only as a file of its own that nobody but its owner may change (no link, not writable by group or others): one that is not stays where it is, saying why (docs/operations.md, "Four eyes")',
    ),
  approvers: z
    .string()
    .regex(
      /^\s*(@?[A-Za-z0-9_][A-Za-z0-9_.-]*\s*(,\s*@?[A-Za-z0-9_][A-Za-z0-9_.-]*\s*)*)?$/,
      'expected user names and @groups separated by commas, like ana,bruno,@financeiro',
    )
    .transform((text) =>
      text
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    )
    .describe(
      "who may approve a file under `fourEyes`: Unix user names and `@group`s (its members, by the system's user database), separated by commas, such as `ana,bruno,@financeiro`. Empty: nothing is released, and every run says to set it",
    ),
  secondApprovalAbove: reais.describe(
    'under `fourEyes`, a file whose payouts total more than this, in reais (`50000` or `"50.000,00"`), needs two distinct approvers; `null`: one is enough whatever the total',
  ),
  dailyLimit: reais.describe(
    "under `fourEyes`, reais a home may release in one calendar day (in `timeZone`): a file that would take the day's approved totals beyond it needs two distinct approvers, whatever its size; `null`: no limit",
  ),
});

export type Config = z.output<typeof ConfigSchema>;
export type ConfigKey = keyof Config;
export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as ConfigKey[];

/** `baseUrl` -> `PAYOUTS_BASE_URL` */
export function envName(key: string): string {
  return `PAYOUTS_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}
