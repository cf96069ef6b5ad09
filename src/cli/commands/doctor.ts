/**
 * `payouts doctor`: whether this machine is ready to pay, checked without moving money
 * or changing anything: the effective configuration and where each value came from, the
 * gateway reached and the token accepted (a balance read), the home folder writable
 * with the modes `sharedGroup` asks for, and the journal: its binding, its schema, and
 * that it is this home's own; under fourEyes, that someone other than the service user can
 * approve. Exit 0 only when every check holds.
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { displayed } from '../../config/load.js';
import { formatDuration, formatElapsed } from '../../config/duration.js';
import { CONFIG_KEYS, envName, type Config } from '../../config/schema.js';
import { ENV_FILE_VARIABLE, shellReadsOtherwise } from '../../config/env-file.js';
import { formatCents } from '../../messages/money.js';
import { sayInEnglish } from '../../messages/say.js';
import { GatewayError } from '../../gateway/errors.js';
import {
  defaultAclLetsOthersWrite,
  defaultAclLetsRead,
  parseDefaultAcl,
  readDefaultAcl,
} from '../../inbox/default-acl.js';
import { homeLockName } from '../../inbox/lock.js';
import {
  homeFolders,
  SHARED_MODES,
  sharedGroupId,
  groupEntry,
  userIdOf,
  userNameOf,
  type Folders,
} from '../../inbox/folders.js';
import { isApprover } from '../../inbox/four-eyes.js';
import { JOURNAL_STORE } from '../../journal/journal.js';
import { journalErrorInEnglish } from '../../journal/failures.js';
import { hostsAtWork, type HostAtWork } from '../../journal/hosts.js';
import { clockOff } from '../../journal/clock-skew.js';
import {
  homeOwnerProblem,
  openContext,
  openGateway,
  type Context,
  type GlobalOptions,
} from '../context.js';
import { ExitError } from '../exit-error.js';
import { homeJournalAt, readJournalOf } from '../work-journal.js';
import { journalAddress } from '../../journal/open.js';
import type { HelpTexts } from '../../messages/catalog.js';
import type { CliIo } from '../../runtime/io.js';

/** `warn`: payouts runs, but something a person must read first (exit 0 still). */
type Level = 'ok' | 'warn' | 'fail';

interface Check {
  name: string;
  level: Level;
  detail: string;
}

const PREFIX: Record<Level, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };

export function doctorCommand(io: CliIo, { command: { doctor: words } }: HelpTexts): Command {
  return new Command('doctor')
    .description(words.description)
    .addHelpText('after', words.after)
    .action(async (_options: object, command: Command) => {
      const context = openContext(io, command.optsWithGlobals<GlobalOptions>(), 'trying-out');
      const folders = homeFolders(context.config.home);
      const checks = [
        ...(await gatewayChecks(context)),
        ...homeChecks(folders, context.config.sharedGroup),
        ...inboxCheck(folders, context.config, io.env),
        ...(await journalChecks(folders, context)),
        contactsCheck(context.config),
        ...fourEyesChecks(context.config, folders),
        ...(context.envFile === undefined ? [] : [envFileCheck(context.envFile)]),
        ...tokenPlaceChecks(context),
      ];
      const settings = CONFIG_KEYS.map((key) => ({
        key,
        value: displayed(key, context.config[key]),
        from: context.sources[key],
      }));
      const failed = checks.filter((check) => check.level === 'fail').length;
      const warned = checks.filter((check) => check.level === 'warn').length;
      context.out.data({
        ok: failed === 0,
        checks: checks.map((check) => ({ ...check, ok: check.level !== 'fail' })),
        settings,
      });
      context.out.line(
        [
          ...checks.map((check) => `${PREFIX[check.level]}  ${check.name}: ${check.detail}`),
          '',
          'configuration (value, and where it came from):',
          ...settings.map(({ key, value, from }) => `  ${key} = ${value}  (${from})`),
        ].join('\n'),
      );
      if (failed > 0)
        throw new ExitError(
          1,
          `payouts doctor: ${failed} of ${checks.length} checks failed; nothing was changed`,
        );
      if (warned > 0)
        context.out.warn(
          `payouts doctor: every check holds, ${warned} with a warning to read before the first payroll`,
        );
    });
}

/** Which gateway, and whether it answers our token: a balance read, which moves nothing. */
async function gatewayChecks(context: Context): Promise<Check[]> {
  const { config } = context;
  if (config.baseUrl === null) {
    return [
      {
        name: 'gateway',
        level: 'fail',
        detail:
          config.gateway === 'sandbox'
            ? 'the embedded sandbox, where no real money moves: fine for trying payouts, not for paying; set baseUrl and token for the real gateway'
            : 'none is configured: set PAYOUTS_BASE_URL and PAYOUTS_TOKEN (is the environment file loaded?)',
      },
    ];
  }
  const gateway: Check = {
    name: 'gateway',
    level: 'ok',
    detail: `${displayed('baseUrl', config.baseUrl)} (real: payouts move money)`,
  };
  const session = await openGateway(context);
  // A gateway that never answers would otherwise leave the terminal silent until its deadline.
  context.out.note(
    `payouts doctor: reading the balance at ${displayed('baseUrl', config.baseUrl)}, to check the address and the token; waiting up to ${formatDuration(config.connectTimeout + config.requestTimeout)} (connectTimeout + requestTimeout)`,
  );
  try {
    const balance = await session.client.getBalance();
    return [
      gateway,
      {
        name: 'gateway reached, token accepted',
        level: 'ok',
        detail: `balance ${formatCents(balance.balance)}`,
      },
    ];
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return [
      gateway,
      { name: 'gateway reached, token accepted', level: 'fail', detail: gatewayProblem(error) },
    ];
  } finally {
    await session.close();
  }
}

function gatewayProblem(error: GatewayError): string {
  switch (error.kind) {
    case 'auth':
      return `the token was refused (${error.message}): check PAYOUTS_TOKEN and authScheme`;
    case 'unavailable':
      return `no connection (${error.message}): check baseUrl, DNS and the firewall`;
    case 'wrong-endpoint':
      return `the address answered, but not as the gateway does (${error.message}): check baseUrl and its path`;
    default:
      return `the balance could not be read (${error.kind}: ${error.message})`;
  }
}

/** The home and its folders: there, writable by us, and with the modes sharing asks for. */
function homeChecks(folders: Folders, sharedGroup: string | null): Check[] {
  const home = statSync(folders.home, { throwIfNoEntry: false });
  if (!home?.isDirectory()) {
    return [
      {
        name: 'home',
        level: 'fail',
        detail: `${folders.home} is not a folder: make it, owned by the user that runs payouts (mkdir -p ${folders.home}; chown USER: ${folders.home})`,
      },
    ];
  }
  const owner = homeOwnerProblem('doctor', folders.home);
  if (owner !== undefined) return [{ name: 'home', level: 'fail', detail: owner }];
  const problems: string[] = [];
  const gid = sharedGroup === null ? undefined : sharedGroupId(sharedGroup);
  if (sharedGroup !== null && gid === undefined)
    problems.push(`sharedGroup "${sharedGroup}" is not a group on this machine`);
  for (const [name, mode] of Object.entries(SHARED_MODES) as [
    keyof typeof SHARED_MODES,
    number,
  ][]) {
    const path = folders[name];
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) continue; // made on the first run, with its mode
    const problem = folderProblem(path, stats, gid === undefined ? undefined : { gid, mode });
    if (problem !== undefined) problems.push(problem);
  }
  const sharing =
    sharedGroup === null
      ? 'folders owner-only'
      : `shared with group ${sharedGroup}: inbox/ and approval folders 2770 (3770, sticky, under fourEyes), the others 2750, set at each start`;
  return [
    {
      name: 'home',
      level: problems.length === 0 ? 'ok' : 'fail',
      detail:
        problems.length === 0 ? `${folders.home} is writable; ${sharing}` : problems.join('; '),
    },
  ];
}

/**
 * With a shared group, whether a file an accountant drops in the inbox is readable by
 * payouts whatever their umask or Samba mask: the inbox's default ACL must give the group
 * read. Without one, only payouts' own user drops files there: nothing to check.
 */
function inboxCheck(
  folders: Folders,
  { sharedGroup, fourEyes }: Pick<Config, 'sharedGroup' | 'fourEyes'>,
  env: CliIo['env'],
): Check[] {
  const gid = sharedGroup === null ? undefined : sharedGroupId(sharedGroup);
  if (sharedGroup === null || gid === undefined) return [];
  const { inbox } = folders;
  const name = 'inbox';
  // Read-only: payouts reads every file, and nobody but its owner changes it.
  const setAcl = `setfacl -d -m g::r,g:${sharedGroup}:r ${inbox}`;
  const unreadable = `a file dropped there saved readable by its owner only (umask 077, a strict Samba create mask) cannot be read by payouts`;
  const stats = statSync(inbox, { throwIfNoEntry: false });
  if (!stats?.isDirectory()) {
    const owner = userNameOf(process.getuid?.() ?? 0);
    return [
      {
        name,
        level: 'fail',
        detail: `${inbox} does not exist yet; make it with a default ACL that lets payouts read every file dropped in it: install -d -o ${owner} -g ${sharedGroup} -m 2770 ${inbox}; ${setAcl}`,
      },
    ];
  }
  const acl = readDefaultAcl(inbox, env);
  if (acl === undefined) {
    return [
      {
        name,
        level: 'fail',
        detail: `getfacl is not installed, so whether payouts can read every file dropped in ${inbox} cannot be checked: install the acl package (apt-get install acl), then ${setAcl}`,
      },
    ];
  }
  const reader = { uid: process.getuid?.() ?? 0, gids: process.getgroups?.() ?? [] };
  // A setgid inbox gives its files its own group; otherwise the writer's.
  const fileGid = (stats.mode & 0o2000) !== 0 ? stats.gid : -1;
  const entries = parseDefaultAcl(acl);
  if (fourEyes && defaultAclLetsOthersWrite(entries)) {
    return [
      {
        name,
        level: 'fail',
        detail: `its default ACL lets others than a file's owner change every file dropped in ${inbox}: under fourEyes such a file is not taken; set it read-only: ${setAcl}`,
      },
    ];
  }
  return defaultAclLetsRead(entries, reader, fileGid)
    ? [
        {
          name,
          level: 'ok',
          detail: `its default ACL lets payouts read every file dropped in ${inbox}, whatever the mask it was saved with`,
        },
      ]
    : [
        {
          name,
          level: 'fail',
          detail: `no default ACL on ${inbox} gives group ${sharedGroup} read: ${unreadable}; set one: ${setAcl}`,
        },
      ];
}

function folderProblem(
  path: string,
  stats: Stats,
  shared: { gid: number; mode: number } | undefined,
): string | undefined {
  if (!stats.isDirectory()) return `${path} is not a folder`;
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch {
    return `${path} is not writable by the user running payouts (uid ${process.getuid?.()})`;
  }
  const uid = process.getuid?.();
  if (shared === undefined) {
    return (stats.mode & 0o002) !== 0
      ? `${path} is writable by every user (mode ${octal(stats.mode)}): chmod o-w ${path}`
      : undefined;
  }
  // Each start sets group and mode; it can when we own the folder and are in the group.
  if (uid !== 0 && stats.uid !== uid)
    return `${path} belongs to uid ${stats.uid}, not to the user running payouts: its group and mode cannot be set (chown USER: ${path})`;
  if (uid !== 0 && !process.getgroups?.().includes(shared.gid))
    return `the user running payouts is not in the shared group (gid ${shared.gid}): usermod -aG GROUP USER`;
  return undefined;
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * The journal, read only: this home's own, its schema current, bound to this kind of
 * gateway, and on PostgreSQL the hosts at work on it; a damaged or unreadable one is a
 * failed check that names it, not the end of the checks.
 */
async function journalChecks(folders: Folders, context: Context): Promise<Check[]> {
  try {
    return await readJournalCheck(folders, context);
  } catch (error) {
    const why = journalErrorInEnglish(error, 'nothing');
    if (why === undefined) throw error;
    return [{ name: 'journal', level: 'fail', detail: why }];
  }
}

/** How far back `payouts doctor` lists the hosts seen at work on the journal. */
const HOSTS_WINDOW_MS = 10 * 60_000;

/**
 * A line per host at work on the journal: when last seen, how far its clock read from the
 * database's (failed beyond `boundMs`, maxClockSkew; a warning when its last reading could
 * not tell), what it holds, its leased rows.
 */
function hostChecks(hosts: readonly HostAtWork[], now: number, boundMs: number): Check[] {
  if (hosts.length === 0)
    return [
      {
        name: 'hosts',
        level: 'ok',
        detail: `none seen at work in the last ${formatElapsed(HOSTS_WINDOW_MS)}`,
      },
    ];
  return hosts.map(({ host, seenAt, clockOffsetMs, clockRoundTripMs, holds, leased }) => {
    const way = clockOffsetMs === undefined ? undefined : clockOff(clockOffsetMs, boundMs);
    const untold = clockOffsetMs === undefined && clockRoundTripMs !== undefined;
    return {
      name: `host ${host}`,
      level: way !== undefined ? 'fail' : untold ? 'warn' : 'ok',
      detail: [
        seenAt === undefined
          ? `not seen in the last ${formatElapsed(HOSTS_WINDOW_MS)}`
          : `seen ${formatElapsed(now - seenAt)} ago`,
        ...(clockOffsetMs !== undefined
          ? [clockSaid(clockOffsetMs, way, boundMs)]
          : untold
            ? [
                `its clock: could not tell (round trip ${clockRoundTripMs} ms) whether it is within maxClockSkew (${Math.round(boundMs / 1000)} s) of the database's; check the network and the load between it and the database`,
              ]
            : []),
        ...holds.map((name) =>
          name === homeLockName(host, true) || name === homeLockName(host, false)
            ? 'at work on the home folder'
            : `holds the lock ${name}`,
        ),
        leased === undefined
          ? 'no rows under its leases'
          : `${leased.rows} ${leased.rows === 1 ? 'row' : 'rows'} under its leases for ${formatElapsed(leased.until - now)} more`,
      ].join(', '),
    };
  });
}

/** "its clock 3 s ahead of the database's", and what to do when that is beyond the bound. */
function clockSaid(offsetMs: number, way: 'ahead' | 'behind' | undefined, boundMs: number): string {
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  const off = seconds === 0 ? 'on' : `${seconds} s ${offsetMs > 0 ? 'ahead' : 'behind'} of`;
  const said = `its clock ${off} the database's`;
  return way === undefined
    ? said
    : `${said}, more than maxClockSkew (${Math.round(boundMs / 1000)} s) allows: it pays nothing until its clock is kept by NTP (chrony or systemd-timesyncd)`;
}

async function readJournalCheck(folders: Folders, context: Context): Promise<Check[]> {
  const name = 'journal';
  const { journal, loss, moved } = await readJournalOf(
    folders,
    context.config,
    context.io.clock.now,
  );
  const location = homeJournalAt(folders, context.config);
  try {
    if (loss !== undefined) return [{ name, level: 'fail', detail: loss }];
    // Every run would refuse it: the home works only once its hosts are set to the database.
    if (moved !== undefined) return [{ name, level: 'fail', detail: sayInEnglish(moved) }];
    if (journal === undefined) {
      return [
        {
          name,
          level: 'ok',
          detail:
            location.kind === 'sqlite'
              ? `none yet: the first run makes ${location.path} (${JOURNAL_STORE}, owner-only)`
              : `none yet: the first run makes it in ${journalAddress(location)}`,
        },
      ];
    }
    const { address, store, schema, latestSchema } = await journal.describe();
    const bound = await journal.gatewayKind();
    // A file's mode is the SQLite journal's own; a database's access is its server's.
    const mode = location.kind === 'sqlite' ? statSync(location.path).mode & 0o777 : 0o600;
    const wanted = context.config.baseUrl === null ? 'sandbox' : 'configured';
    const problems = [
      bound !== undefined && bound !== wanted
        ? bound === 'sandbox'
          ? 'it has only sent to the embedded sandbox: real payouts need a home folder of their own'
          : 'it sends to a real gateway, but no baseUrl is set'
        : undefined,
      (mode & 0o077) !== 0
        ? `its mode is ${octal(mode)}: the next run makes it owner-only (0600)`
        : undefined,
    ].filter((problem): problem is string => problem !== undefined);
    const detail = `${address}: ${store}, schema ${schema} (${schema < latestSchema ? `the next run brings it to ${latestSchema}` : 'current'}), ${bound === undefined ? 'has sent nothing yet' : bound === 'sandbox' ? 'sends to the embedded sandbox' : 'sends to a real gateway'}`;
    if (problems.length > 0)
      return [{ name, level: 'fail', detail: `${detail}; but ${problems.join('; ')}` }];
    const check: Check = { name, level: 'ok', detail };
    // One host works on a SQLite journal; a schema before the hosts' table keeps none.
    if (location.kind !== 'postgres' || schema < latestSchema) return [check];
    const seen = await journal.hostsSeen(HOSTS_WINDOW_MS);
    return [check, ...hostChecks(hostsAtWork(seen), seen.now, context.config.maxClockSkew)];
  } finally {
    await journal?.close();
  }
}

/**
 * The gateway takes a payout only with an e-mail and a phone; a row that has neither in
 * its file nor as its Pix key takes these settings, or is invalid and not paid.
 */
function contactsCheck(config: Config): Check {
  const name = 'recipient contacts';
  const { recipientEmail: email, recipientPhone: phone } = config;
  if (email !== null && phone !== null)
    return {
      name,
      level: 'ok',
      detail: `a row without an e-mail or a phone is sent with ${email} and ${phone}`,
    };
  const missing = [
    email === null ? 'recipientEmail' : undefined,
    phone === null ? 'recipientPhone' : undefined,
  ].filter((key): key is string => key !== undefined);
  const add = [
    email === null ? `${envName('recipientEmail')}=folha@empresa.com.br` : undefined,
    phone === null ? `${envName('recipientPhone')}=(11) 3333-4444` : undefined,
  ].filter((line): line is string => line !== undefined);
  return {
    name,
    level: 'warn',
    detail: `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set: a row with no ${missing.length === 1 ? (email === null ? 'e-mail' : 'phone') : 'e-mail or no phone'} in its file (an export such as Nome;CPF;Chave Pix;Valor has neither) is invalid and not paid, unless its Pix key is one: add ${add.join(' and ')} to the environment file, with your company's own contact`,
  };
}

/**
 * Under four eyes, whether anyone can approve: every entry of approvers a user or group of
 * this machine, and none of them the service user or root, whose approvals never count.
 */
function fourEyesChecks(config: Config, folders: Folders): Check[] {
  if (!config.fourEyes) return [];
  const name = 'four eyes';
  const fail = (detail: string): Check[] => [{ name, level: 'fail', detail }];
  const { approvers } = config;
  if (approvers.length === 0)
    return fail(
      `fourEyes is on and approvers names nobody: no file is ever released. Name who may approve in the settings file: ${envName('approvers')}=ana,bruno,@financeiro`,
    );
  const exists = (entry: string) =>
    entry.startsWith('@')
      ? groupEntry(entry.slice(1)) !== undefined
      : userIdOf(entry) !== undefined;
  const missing = approvers
    .filter((entry) => !exists(entry))
    .map((entry) => `${entry} is no ${entry.startsWith('@') ? 'group' : 'user'} here`);
  const known = approvers.filter(exists);
  if (known.length === 0)
    return fail(
      `approvers names no user or group of this machine: ${missing.join('; ')}. Nobody can approve: name existing users or groups (getent passwd NAME, getent group NAME)`,
    );
  const home = statSync(folders.home, { throwIfNoEntry: false });
  const service = [0, process.getuid?.() ?? 0, ...(home ? [home.uid] : [])];
  const among = [...new Set(service)].filter((uid) => isApprover(uid, approvers));
  const named = among.filter((uid) =>
    approvers.some((entry) => !entry.startsWith('@') && userIdOf(entry) === uid),
  );
  if (named.length > 0)
    return fail(
      `approvers names ${named.map(userNameOf).join(', ')}, the user payouts runs as (or root): its approvals never count, and it would look like a second person. Take it out of ${envName('approvers')}`,
    );
  // The server install's accounting group holds the service user, which is never counted.
  const groups = approvers.filter((entry) => entry.startsWith('@')).join(', ');
  const inGroup =
    among.length === 0
      ? ''
      : `; ${among.map(userNameOf).join(', ')} (the user payouts runs as, or root) ${among.length === 1 ? 'is' : 'are'} never counted, though in ${groups}`;
  if (missing.length > 0)
    return [
      {
        name,
        level: 'warn',
        detail: `approvers: ${known.join(', ')}; ${missing.join('; ')}: take ${missing.length === 1 ? 'it' : 'them'} out of ${envName('approvers')}, or make ${missing.length === 1 ? 'that user' : 'them'}`,
      },
    ];
  return [{ name, level: 'ok', detail: `approvers: ${approvers.join(', ')}${inGroup}` }];
}

/**
 * The file as payouts read it, and the lines a shell's `.` would read otherwise: said, so
 * that a cron line or script that still loads the file that way is changed.
 */
function envFileCheck({ path, settings }: NonNullable<Context['envFile']>): Check {
  const names = Object.keys(settings.values);
  const read = `${path}: ${names.length} settings read as written`;
  const otherwise = names
    .filter((name) => shellReadsOtherwise(settings.values[name] ?? ''))
    .map((name) => `${settings.lineOf[name]} (${name})`);
  const lines = `${otherwise.slice(0, -1).join(', ')}${otherwise.length > 1 ? ' and ' : ''}${otherwise.at(-1)}`;
  return {
    name: 'environment file',
    level: 'ok',
    detail:
      otherwise.length === 0
        ? read
        : `${read}; a shell's \`.\` would read ${otherwise.length === 1 ? 'line' : 'lines'} ${lines} otherwise (spaces, quotes, \`$\`): load the file with --settings-file or ${ENV_FILE_VARIABLE} only, never with \`. ${path}\``,
  };
}

/** The file the token was read from, if a file: the tokenFile, the environment file, --config. */
function tokenPlaceChecks({ config, sources, envFile }: Context): Check[] {
  if (config.token === null) return [];
  const from = sources.token;
  const settingsFile =
    envFile !== undefined && from.startsWith(`${envFile.path} line `) ? envFile.path : undefined;
  const file =
    config.tokenFile ??
    settingsFile ??
    (from.startsWith('--config ') ? from.slice('--config '.length) : undefined);
  const stats = file === undefined ? undefined : statSync(file, { throwIfNoEntry: false });
  if (file === undefined || stats === undefined) return [];
  const sharedGid = config.sharedGroup === null ? undefined : sharedGroupId(config.sharedGroup);
  return [
    tokenPlaceCheck({
      file,
      mode: stats.mode & 0o777,
      gid: stats.gid,
      shared:
        sharedGid === undefined ? undefined : { group: config.sharedGroup ?? '', gid: sharedGid },
      withSettings: config.tokenFile === null,
    }),
  ];
}

/**
 * Who may read the token where it is: a file every user reads, or one the group sharing
 * the home (accounting) reads, is a warning; the token among the other settings is kept
 * working, with how to move it so that the group may read those settings.
 */
export function tokenPlaceCheck(place: {
  file: string;
  mode: number;
  gid: number;
  shared: { group: string; gid: number } | undefined;
  /** The token sits among the other settings, not in a tokenFile of its own. */
  withSettings: boolean;
}): Check {
  const { file, mode, gid, shared, withSettings } = place;
  const name = 'token';
  const move = withSettings
    ? `: put the token alone in a file only the service user reads (install -o root -g payouts -m 640 /dev/null /etc/payouts.secret, then write the token in it), and in ${file} replace ${envName('token')} with ${envName('tokenFile')}=/etc/payouts.secret`
    : `: chown root:payouts ${file}; chmod 640 ${file} (payouts being the service user's group)`;
  if ((mode & 0o004) !== 0)
    return {
      name,
      level: 'warn',
      detail: `${file} (mode ${octal(mode)}) holds the token, and every user of this machine may read it${move}`,
    };
  if (shared !== undefined && gid === shared.gid && (mode & 0o040) !== 0)
    return {
      name,
      level: 'warn',
      detail: `${file} (mode ${octal(mode)}, group ${shared.group}) holds the token, and every member of ${shared.group} may read it${move}`,
    };
  return {
    name,
    level: 'ok',
    detail: withSettings
      ? `read from ${file}, with the other settings, which only the service user reads then; for the members of ${shared?.group ?? 'sharedGroup'} to check files with these settings (payouts validate)${move}, and chown root:${shared?.group ?? 'GROUP'} ${file}`
      : shared === undefined
        ? `read from ${file}, kept apart from the other settings`
        : `read from ${file}, which the members of ${shared.group} may not read`,
  };
}
