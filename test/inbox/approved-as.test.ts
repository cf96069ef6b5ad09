/**
 * Whether the approvals journaled for a batch release it, when the setting of how many
 * approvers a file needs (secondApprovalAbove, dailyLimit) changed between them: only the
 * approvals of one code count, they must reach what that code was approved as needing,
 * and never fewer than the setting now in force asks.
 */
import { describe, expect, it } from 'vitest';
import type { BatchEvent } from '../../src/journal/journal.js';
import { approvedAs } from '../../src/inbox/four-eyes.js';

const CODE = 'K7QD-M2XA-P9RT';
const OTHER = 'NGJM-3VKW-XMRV';
const UIDS: Record<string, number> = { ana: 1001, bruno: 1002, carla: 1003, 'ana.souza': 1001 };

/** `ana:2`: ana approved CODE as needing 2; `ana@OTHER:1`, another code; `ana?:2`, no uid. */
function events(...approvals: string[]): BatchEvent[] {
  return [
    { at: 0, event: 'dropped', by: 'maria', detail: { code: 'eventDropped', uid: 1000 } },
    ...approvals.map((text, i): BatchEvent => {
      const [who = '', needed = ''] = text.split(':');
      const [name = '', code = CODE] = who.replace('?', '').split('@');
      return {
        at: i + 1,
        event: 'approved',
        by: name,
        detail: {
          code: 'eventFourEyesApproved',
          approvalCode: code === 'OTHER' ? OTHER : code,
          count: 2,
          cents: 600_000,
          needed: Number(needed),
          via: `folha.csv.${name}.aprovado`,
          ...(who.includes('?') ? {} : { uid: UIDS[name] }),
        },
      };
    }),
  ];
}

describe('approvedAs', () => {
  it.each([
    ['nobody approved', [], 1, false],
    ['one approver, one needed', ['ana:1'], 1, true],
    ['one approved as needing one, the setting now asks two', ['ana:1'], 2, false],
    [
      'raised between approvals: both recorded again as needing two',
      ['ana:1', 'ana:2', 'bruno:2'],
      2,
      true,
    ],
    ['raised between approvals, the second approver not there yet', ['ana:1', 'ana:2'], 2, false],
    ['one of two recorded, then lowered: the code still needs two', ['ana:2', 'ana:1'], 1, false],
    ['two of two recorded, then lowered', ['ana:2', 'bruno:2'], 1, true],
    ['two of two recorded, then raised to three', ['ana:2', 'bruno:2'], 3, false],
    ['three of three', ['ana:3', 'bruno:3', 'carla:3'], 3, true],
    ['approvals of another code count for nothing', ['ana@OTHER:1', 'bruno:1'], 2, false],
    ['one approval of this code is one', ['ana@OTHER:1', 'bruno:1'], 1, true],
    ["another code's needs do not raise this code's", ['ana@OTHER:3', 'bruno:1'], 1, true],
    ['two names of one uid are one approver', ['ana:2', 'ana.souza:2'], 2, false],
    ['approvals journaled before uids, by name', ['ana?:2', 'bruno?:2'], 2, true],
  ])('%s', (_, approvals, neededNow, released) => {
    expect(approvedAs(events(...approvals), CODE, neededNow)).toBe(released);
  });
});
