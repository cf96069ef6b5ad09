/**
 * Four eyes (fourEyes, docs/operations.md, "Four eyes"): a waiting file is released only
 * by approvers other than the person who dropped it, each known by the Unix user that owns
 * the approval they left beside it (`FILE.aprovado`, `FILE.NAME.aprovado`), never by a
 * typed name. Each approval holds the file's approval code, which binds the batch, the
 * file's bytes, and the number and total of its payouts: an approval of another version
 * releases nothing.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { commandTarget, givenName } from '../csv/given-name.js';
import type {
  BatchEvent,
  BatchRecord,
  JournalApproval,
  JournalBatches,
  JournalReports,
} from '../journal/journal.js';
import type { FourEyesRule, Said } from '../messages/said.js';
import {
  groupEntry,
  isPayoutFileName,
  moveInto,
  payoutFiles,
  reject,
  sha256Of,
  userEntry,
  userIdOf,
  userNameOf,
  type Folders,
} from './folders.js';

/** Base32 without the letters and digits read alike aloud (I and 1, O and 0). */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** `K7QD-M2XA-P9RT`: 60 bits of the batch, the file's SHA-256, its payouts and their total. */
export function approvalCode(
  batch: { id: number; sha256: string },
  sent: { count: number; cents: number },
): string {
  const digest = createHash('sha256')
    .update(`payouts approval\n${batch.id}\n${batch.sha256}\n${sent.count}\n${sent.cents}`)
    .digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 8)) bits = (bits << 8n) | BigInt(byte);
  let code = '';
  for (let i = 0; i < 12; i++) code += ALPHABET[Number((bits >> BigInt(59 - i * 5)) & 31n)];
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

/** The first approval code written in a text (a report, an approval file), if any. */
export function codeIn(text: string): string | undefined {
  return /\b[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\b/.exec(text.toUpperCase())?.[0];
}

/**
 * The batch a waiting file's report names beside its approval code (`K7QD-M2XA-P9RT
 * (batch 3: …`, `(lote 3: …`): how a person's command, which opens no journal, tells two
 * waiting files of one name apart.
 */
export function batchIn(report: string): number | undefined {
  const batch = /\b[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4} \(\p{L}+ (\d+):/u.exec(report)?.[1];
  return batch === undefined ? undefined : Number(batch);
}

/**
 * Whether a user is named in `approvers`, or is a member of a `@group` named there: by
 * uid, so any of a user's names counts, and two names of one uid are one person.
 */
export function isApprover(uid: number, approvers: readonly string[]): boolean {
  const user = userEntry(uid);
  if (!user) return false;
  return approvers.some((entry) => {
    if (!entry.startsWith('@')) return userIdOf(entry) === uid;
    const group = groupEntry(entry.slice(1));
    return (
      group !== undefined &&
      (group.gid === user.gid || group.members.some((member) => userIdOf(member) === uid))
    );
  });
}

/** The suffixes of the files a person leaves beside a waiting file. */
const APPROVES = '.aprovado';
const REJECTS = '.rejeitado';

/** Whether `each` is `file.aprovado` or `file.NAME.aprovado`, or either with the `.txt` Notepad adds. */
function decides(each: string, file: string, suffix: string): boolean {
  return [suffix, `${suffix}.txt`].some(
    (end) =>
      each === `${file}${end}` ||
      (each.startsWith(`${file}.`) &&
        each.endsWith(end) &&
        each.length > file.length + end.length + 1),
  );
}

/**
 * Approval (or rejection) files beside `name` in awaiting-approval/, by exact name:
 * `name.aprovado`, `name.X.aprovado` (and `.aprovado.txt`), never one that is another
 * waiting file's (`name.v2.csv.aprovado` is `name.v2.csv`'s when that file waits too).
 */
export function decisionFiles(folder: string, name: string, suffix = APPROVES): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const longer = names.filter((other) => other.startsWith(`${name}.`) && isPayoutFileName(other));
  return names
    .filter(
      (each) =>
        decides(each, name, suffix) && !longer.some((other) => decides(each, other, suffix)),
    )
    .sort()
    .map((each) => join(folder, each));
}

/** Rejection files beside `name`: the same rules as approvals. */
export const rejectionFiles = (folder: string, name: string): string[] =>
  decisionFiles(folder, name, REJECTS);

/** Who never approves: root and the home's owner, the service user. */
export function serviceUids(folders: Folders): number[] {
  return [0, statSync(folders.home).uid];
}

/** Longest approval file read: a code and a note. */
const MOST_BYTES = 4096;

/** One approval file weighed: its approver and what it says, or the rule it breaks. */
export type Decision =
  | { file: string; by: string; uid: number; text: string }
  | { file: string; owner: string; rule: FourEyesRule };

/**
 * Weighs one approval file against the rules: who it is of, and whether it counts. Owner,
 * mode, links and words are all read through one handle, opened without following a
 * link: a file renamed or replaced meanwhile is never judged by another's owner.
 */
export function weighDecision(
  path: string,
  code: string,
  facts: { dropperUid: number; serviceUids: readonly number[]; approvers: readonly string[] },
): Decision {
  const file = basename(path);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO left there never stalls the pass.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    const uid = lstatSync(path, { throwIfNoEntry: false })?.uid;
    return { file, owner: uid === undefined ? '?' : userNameOf(uid), rule: 'not-a-file' };
  }
  try {
    const stat = fstatSync(fd);
    const owner = userNameOf(stat.uid);
    const broken = (rule: FourEyesRule): Decision => ({ file, owner, rule });
    if (!stat.isFile() || stat.size > MOST_BYTES) return broken('not-a-file');
    if ((stat.mode & 0o022) !== 0) return broken('writable');
    // Another name of the same file: it may be someone else's approval, linked in.
    if (stat.nlink !== 1) return broken('linked');
    if (facts.serviceUids.includes(stat.uid)) return broken('service');
    if (stat.uid === facts.dropperUid) return broken('dropper');
    if (!isApprover(stat.uid, facts.approvers)) return broken('not-approver');
    const bytes = Buffer.alloc(MOST_BYTES);
    const text = bytes.subarray(0, readSync(fd, bytes, 0, MOST_BYTES, 0)).toString('utf8');
    if (codeIn(text) !== code) return broken('other-code');
    return { file, by: owner, uid: stat.uid, text };
  } finally {
    closeSync(fd);
  }
}

/** The day of an instant in a time zone, `2026-11-28`. */
function dayOf(at: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date(at));
}

/** The approval events of a batch that four eyes recorded, with the code each approved. */
export function fourEyesApprovals(events: readonly BatchEvent[]): {
  by: string;
  uid: number | undefined;
  at: number;
  approvalCode: string;
  needed: number;
  cents: number;
}[] {
  return events.flatMap((event) =>
    event.event === 'approved' && event.detail.code === 'eventFourEyesApproved'
      ? [{ by: event.by, at: event.at, ...event.detail, uid: event.detail.uid }]
      : [],
  );
}

/** Who an approval is of: its uid, as one person has one whatever their names. */
const personOf = (approval: { by: string; uid?: number | undefined }): string =>
  approval.uid === undefined ? `name ${approval.by}` : `uid ${approval.uid}`;

/**
 * How many approvers `code` needs: the most any of its approvals was recorded as needing,
 * and never fewer than the settings now in force ask (`neededNow`). A setting lowered
 * after a first approval releases nothing with fewer approvers than that approval asked.
 */
function neededOf(events: readonly BatchEvent[], code: string, neededNow: number): number {
  return fourEyesApprovals(events).reduce(
    (most, each) => (each.approvalCode === code ? Math.max(most, each.needed) : most),
    neededNow,
  );
}

/** Whether the approvals recorded for a batch release its file as it is now (`code`). */
export function approvedAs(
  events: readonly BatchEvent[],
  code: string,
  neededNow: number,
): boolean {
  const approvals = fourEyesApprovals(events).filter((each) => each.approvalCode === code);
  return (
    approvals.length > 0 &&
    new Set(approvals.map(personOf)).size >= neededOf(events, code, neededNow)
  );
}

/** Longer than any calendar day in any time zone: the approvals read for one. */
const DAY_AND_MORE_MS = 2 * 24 * 3_600_000;

/**
 * What the approvals released on the day of `now` total, by the day of each batch's last
 * approval: a batch still waiting counts too, as its approvals are recorded only once they
 * release it, and files approved together before one run must count each other. Only the
 * approvals of the last two days are read, a range of an index; with `before`, only those
 * journaled before that instant, as the day stood then.
 */
async function approvedOn(
  journal: JournalBatches,
  now: number,
  timeZone: string,
  except: number,
  before = Infinity,
): Promise<number> {
  const day = dayOf(now, timeZone);
  const last = new Map<number, { at: number; cents: number }>();
  for (const event of await journal.approvalsSince(now - DAY_AND_MORE_MS)) {
    if (event.batchId === except || event.detail.code !== 'eventFourEyesApproved') continue;
    if (event.at >= before) continue;
    last.set(event.batchId, { at: event.at, cents: event.detail.cents });
  }
  let cents = 0;
  for (const { at, cents: approved } of last.values())
    if (dayOf(at, timeZone) === day) cents += approved;
  return cents;
}

/** Why a file of `cents` needs a second approver, with `today` approved on its day already; null: one is enough. */
function secondApproval(
  cents: number,
  today: number,
  {
    secondApprovalAbove: above,
    dailyLimit: limit,
  }: Pick<Config, 'secondApprovalAbove' | 'dailyLimit'>,
): Extract<Said, { code: 'fourEyesWaits' }>['second'] {
  if (above !== null && cents > above) return { rule: 'above', cents, limit: above };
  if (limit !== null && today + cents > limit) return { rule: 'daily', cents: today, limit };
  return null;
}

/**
 * Whether the approvals journaled for a waiting batch release it (`sent`: what it would
 * send) under the settings now in force. The day's approvals are read as they stood at
 * its last approval: a file approved after it that day never sends it back to wait.
 */
export async function releasedByApprovals(
  journal: JournalBatches,
  batch: { id: number; sha256: string },
  sent: { count: number; cents: number },
  config: Pick<Config, 'secondApprovalAbove' | 'dailyLimit' | 'timeZone'>,
): Promise<boolean> {
  const events = await journal.batchEvents(batch.id);
  const code = approvalCode(batch, sent);
  const last = fourEyesApprovals(events).findLast((each) => each.approvalCode === code);
  if (!last) return false;
  const today =
    config.dailyLimit === null
      ? 0
      : await approvedOn(journal, last.at, config.timeZone, batch.id, last.at);
  return approvedAs(events, code, secondApproval(sent.cents, today, config) ? 2 : 1);
}

/** A waiting batch as four eyes sees it this pass. */
export interface Weighing {
  batchId: number;
  code: string;
  /** What is said of it in the run's summary and its report. */
  said: Said;
  /** Approval files that do not count, each with the rule it breaks. */
  refusals: Said[];
  /** Moved into approved/ (its path there): released by this pass. */
  released: string | false;
  /** Turned down by a rejection file: what the run says of it. */
  turnedDown?: Said;
}

/** Who never counts, and who may approve. */
function facts0(folders: Folders, config: Pick<Config, 'approvers'>) {
  return {
    // Whoever runs the pass too: the service, even in a home another user owns.
    serviceUids: [...serviceUids(folders), process.getuid?.() ?? 0],
    approvers: config.approvers,
  };
}

/**
 * A waiting file turned down by a rejection file: its rows held, never sent, recorded
 * with who and why (the lines after the code), the file to rejected/ with the reason.
 */
async function turnDown(
  journal: JournalBatches & JournalApproval,
  folders: Folders,
  batch: BatchRecord,
  decision: { file: string; by: string; text: string },
): Promise<Said | undefined> {
  const { by } = decision;
  const written = decision.text.split('\n').slice(1).join(' ').trim();
  const reason = written || `${decision.file}, by ${by}`;
  const why: Said = { code: 'turnedDownBy', reason };
  if (!(await journal.refuseBatch(batch.id, why))) return undefined;
  await journal.recordBatchEvent(batch.id, 'refused', by, { code: 'eventReason', reason });
  const file = join(folders.awaiting, batch.awaitingName ?? '');
  const moved = reject(file, folders.rejected, [`${by}: ${reason}`]);
  rmSync(`${file}.report.txt`, { force: true });
  for (const each of [
    ...rejectionFiles(folders.awaiting, basename(file)),
    ...decisionFiles(folders.awaiting, basename(file)),
  ])
    rmSync(each, { force: true });
  return {
    code: 'turnedDown',
    file: basename(file),
    batchId: batch.id,
    moved: moved !== undefined,
  };
}

/** Waiting files' hashes, by what any write to them changes (ctime): hashed again only once changed. */
const hashes = new Map<string, { stamp: string; sha256: string }>();

/** A waiting file's SHA-256: a file of hundreds of megabytes is not read whole every pass. */
async function waitingSha256(path: string): Promise<string> {
  const stat = statSync(path);
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const known = hashes.get(path);
  if (known?.stamp === stamp) return known.sha256;
  const sha256 = await sha256Of(path);
  // Bounded: a daemon sees new names for months.
  if (hashes.size >= 1_000) hashes.clear();
  hashes.set(path, { stamp, sha256 });
  return sha256;
}

/**
 * Who dropped a batch's file under four eyes, as recorded at intake: such a batch keeps
 * its rules on every host, whatever that host's own fourEyes says.
 */
export function droppedBy(events: readonly BatchEvent[]): string | undefined {
  return events.find((event) => event.event === 'dropped')?.by;
}

/** Whether a batch is released by four eyes: on this host's setting, or dropped under it anywhere. */
export async function underFourEyes(
  journal: JournalBatches,
  batchId: number,
  fourEyes: boolean,
): Promise<boolean> {
  return fourEyes || droppedBy(await journal.batchEvents(batchId)) !== undefined;
}

/** Who dropped a batch's file: the uid recorded at intake, else its file's owner now. */
function dropperOf(events: readonly BatchEvent[], file: string): number {
  const dropped = events.find((event) => event.detail.code === 'eventDropped');
  if (dropped?.detail.code === 'eventDropped') return dropped.detail.uid;
  return statSync(file).uid;
}

/**
 * The flags of the command a waiting file's words print: its batch too when another file
 * of its name waits beside it, since `approve FILE` alone then picks neither.
 */
export function waitingCommandFlags(
  folders: Folders,
  awaitingName: string,
  batchId: number,
  hintFlags: string,
): string {
  const given = givenName(awaitingName);
  const shared = payoutFiles(folders.awaiting).some(
    (path) => basename(path) !== awaitingName && givenName(basename(path)) === given,
  );
  return commandTarget(awaitingName, batchId, hintFlags, shared).hintFlags;
}

/**
 * Weighs the approvals beside a waiting file: records each that counts (once), and when
 * they are enough under the rules, moves the file into approved/, where the pass releases
 * it, and removes them. `hintFlags`: the run's global flags, for the command it prints.
 */
export async function weighApprovals(
  journal: JournalBatches & JournalReports & JournalApproval,
  folders: Folders,
  batch: BatchRecord,
  config: Pick<Config, 'approvers' | 'secondApprovalAbove' | 'dailyLimit' | 'timeZone'>,
  now: number,
  hintFlags: string,
): Promise<Weighing | undefined> {
  if (batch.awaitingName === null) return undefined;
  const file = join(folders.awaiting, batch.awaitingName);
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return undefined;
  const totals = await journal.rowTotalsOfBatch(batch.id);
  const sent = { count: totals.rows.queued ?? 0, cents: totals.cents.queued ?? 0 };
  const code = approvalCode(batch, sent);
  const events = await journal.batchEvents(batch.id);
  const dropperUid = dropperOf(events, file);
  const dropper = userNameOf(dropperUid);
  const approvers = config.approvers.filter((entry) => entry !== dropper);
  const picked = waitingCommandFlags(folders, batch.awaitingName, batch.id, hintFlags);
  const waits = {
    file: batch.awaitingName,
    dropper,
    approvers,
    approvalCode: code,
    hintFlags: picked,
  };
  if (config.approvers.length === 0) {
    return {
      batchId: batch.id,
      code,
      refusals: [],
      released: false,
      said: { code: 'fourEyesNoApprovers', file: batch.awaitingName },
    };
  }
  // The dropper may withdraw their own file: a rejection sends nothing.
  const rejecting = { ...facts0(folders, config), dropperUid: -1 };
  const rejections = rejectionFiles(folders.awaiting, batch.awaitingName).map((path) => ({
    path,
    decision: weighDecision(path, code, rejecting),
  }));
  const rejection = rejections.find(({ decision }) => 'by' in decision);
  if (rejection && 'by' in rejection.decision) {
    const turnedDown = await turnDown(journal, folders, batch, rejection.decision);
    if (turnedDown)
      return {
        batchId: batch.id,
        code,
        said: turnedDown,
        refusals: [],
        released: false,
        turnedDown,
      };
  }
  const paths = decisionFiles(folders.awaiting, batch.awaitingName);
  const changed = (await waitingSha256(file)) !== batch.sha256;
  const facts = { ...facts0(folders, config), dropperUid };
  const decisions = paths.map((path) =>
    changed
      ? ({
          file: basename(path),
          owner: userNameOf(lstatSync(path).uid),
          rule: 'changed-file',
        } as const)
      : weighDecision(path, code, facts),
  );
  // One name a person: the first of their approvals names them.
  const people = new Map<number, string>();
  for (const d of decisions) if ('by' in d && !people.has(d.uid)) people.set(d.uid, d.by);
  const approvedBy = [...people.values()];
  const refusals: Said[] = [...decisions, ...rejections.map(({ decision }) => decision)].flatMap(
    (d) => ('rule' in d ? [{ code: 'fourEyesRefused', ...d, dropper, approvers } as const] : []),
  );
  const today =
    config.dailyLimit === null || approvedBy.length === 0
      ? 0
      : await approvedOn(journal, now, config.timeZone, batch.id);
  const second = secondApproval(sent.cents, today, config);
  const needed = neededOf(events, code, second ? 2 : 1);
  const said: Said = changed
    ? { code: 'fourEyesChanged', file: batch.awaitingName, approvalCode: code, hintFlags: picked }
    : { code: 'fourEyesWaits', ...waits, approvedBy, needed, second };
  if (changed || approvedBy.length < needed)
    return { batchId: batch.id, code, said, refusals, released: false };
  const recorded = fourEyesApprovals(events);
  for (const decision of decisions) {
    if (!('by' in decision)) continue;
    const { by } = decision;
    const { uid } = decision;
    if (recorded.some((r) => r.uid === uid && r.approvalCode === code && r.needed === needed))
      continue;
    await journal.recordBatchEvent(batch.id, 'approved', by, {
      code: 'eventFourEyesApproved',
      approvalCode: code,
      count: sent.count,
      cents: sent.cents,
      needed,
      via: decision.file,
      uid,
    });
    recorded.push({ by, uid, at: now, approvalCode: code, needed, cents: sent.cents });
  }
  const moved = moveInto(file, folders.approved);
  if (!moved) return { batchId: batch.id, code, said, refusals, released: false };
  // Kept until the approvals are journaled and the file is on its way: a crash weighs them again.
  for (const path of paths) rmSync(path, { force: true });
  return { batchId: batch.id, code, said, refusals, released: moved };
}
