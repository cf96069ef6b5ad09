/**
 * Real Unix users for the tests of a describe block, made with useradd before them and
 * removed with userdel after (so only as root): four eyes trusts files by their owners.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';

/**
 * Users named `<prefix><pid><who>` (the pid keeps two runs of one file on a machine apart),
 * made for the calling block; `ids` is filled once they are made. `tag` names more of them.
 */
export function useUnixUsers<Who extends string>(
  prefix: string,
  who: readonly Who[],
): {
  tag: string;
  users: Record<Who, string>;
  ids: Record<Who, { uid: number; gid: number }>;
} {
  const tag = `${prefix}${process.pid % 100_000}`;
  const users = Object.fromEntries(who.map((each) => [each, `${tag}${each}`])) as Record<
    Who,
    string
  >;
  const ids = {} as Record<Who, { uid: number; gid: number }>;
  beforeAll(() => {
    for (const each of who) {
      execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', users[each]]);
      const id = (flag: string) =>
        Number(execFileSync('id', [flag, users[each]], { encoding: 'utf8' }).trim());
      ids[each] = { uid: id('-u'), gid: id('-g') };
    }
  });
  afterAll(() => {
    for (const each of who) execFileSync('userdel', [users[each]]);
  });
  return { tag, users, ids };
}
