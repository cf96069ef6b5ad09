/**
 * Whether a file another user saves in the inbox is readable by payouts (uid 998, in
 * groups 998 and 1001, `accounting`), from the inbox's default ACL as getfacl prints it.
 */
import { describe, expect, it } from 'vitest';
import {
  defaultAclLetsOthersWrite,
  defaultAclLetsRead,
  parseDefaultAcl,
} from '../../src/inbox/default-acl.js';

const PAYOUTS = { uid: 998, gids: [998, 1001] };
/** The group a setgid inbox of group `accounting` gives every file made in it. */
const ACCOUNTING = 1001;

describe("a shared inbox's default ACL", () => {
  it.each([
    ['none: the writer umask decides', '', ACCOUNTING, false],
    [
      'the group named, as the docs set it',
      'user::rwx\ngroup::r-x\ngroup:1001:rw-\nmask::rwx\nother::---\n',
      ACCOUNTING,
      true,
    ],
    [
      "the file's own group (setgid to accounting)",
      'user::rwx\ngroup::rw-\nother::---\n',
      ACCOUNTING,
      true,
    ],
    [
      "the file's own group, but not ours (no setgid)",
      'user::rwx\ngroup::rw-\nother::---\n',
      2002,
      false,
    ],
    ['the group left out', 'user::rw-\ngroup::---\nother::---\n', ACCOUNTING, false],
    [
      'the group named, but the mask takes read away',
      'user::rwx\ngroup::---\ngroup:1001:rw-\nmask::-w-\nother::---\n',
      ACCOUNTING,
      false,
    ],
    ['payouts named', 'user::rwx\nuser:998:r--\ngroup::---\nmask::r--\nother::---\n', 2002, true],
    [
      'payouts named without read: its group does not help',
      'user::rwx\nuser:998:---\ngroup:1001:rw-\nmask::rw-\nother::---\n',
      ACCOUNTING,
      false,
    ],
    [
      'a group of ours without read: other does not help',
      'user::rwx\ngroup::---\nother::r--\n',
      ACCOUNTING,
      false,
    ],
    ['other may read', 'user::rwx\ngroup::---\nother::r--\n', 2002, true],
    [
      'with effective comments',
      'user::rwx\ngroup:1001:rw-\t#effective:r--\nmask::r--\nother::---\n',
      ACCOUNTING,
      true,
    ],
  ])('%s', (_case, text, fileGid, readable) => {
    expect(defaultAclLetsRead(parseDefaultAcl(text), PAYOUTS, fileGid)).toBe(readable);
  });

  it('reads named entries by number', () => {
    expect(parseDefaultAcl('group:1001:rw-\nmask::r--\n')).toEqual([
      { tag: 'group', id: 1001, read: true, write: true },
      { tag: 'mask', id: undefined, read: true, write: false },
    ]);
  });

  // Under four eyes a file others may change is not taken: its owner is who dropped it.
  it.each([
    [
      'the group named with write',
      'user::rwx\ngroup::r-x\ngroup:1001:rw-\nmask::rwx\nother::---\n',
      true,
    ],
    ["the file's own group with write", 'user::rwx\ngroup::rwx\nother::---\n', true],
    ['other with write', 'user::rwx\ngroup::r--\nother::rw-\n', true],
    [
      'the mask takes write away',
      'user::rwx\ngroup::rwx\ngroup:1001:rw-\nmask::r--\nother::---\n',
      false,
    ],
    [
      'read-only, as the docs set it',
      'user::rwx\ngroup::r--\ngroup:1001:r--\nmask::r--\nother::---\n',
      false,
    ],
    ['none: the writer umask decides', '', false],
  ])('lets others than the owner write: %s', (_case, text, writable) => {
    expect(defaultAclLetsOthersWrite(parseDefaultAcl(text))).toBe(writable);
  });
});
