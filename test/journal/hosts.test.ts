import { describe, expect, it } from 'vitest';
import { hostsAtWork } from '../../src/journal/hosts.js';
import type { HostsSeen } from '../../src/journal/types.js';

const none: HostsSeen = { now: 100_000, hosts: [], locks: [], leases: [] };

describe('the hosts at work on a journal', () => {
  it.each([
    ['nothing seen', none, []],
    [
      'a host waiting beside the holder, which holds leased rows of two of its processes, its last clock reading too slow to tell',
      {
        ...none,
        hosts: [
          { host: 'pay-2', seenAt: 99_000, clockOffsetMs: 1_500, clockRoundTripMs: 4 },
          { host: 'pay-1', seenAt: 90_000, clockOffsetMs: null, clockRoundTripMs: 45_000 },
        ],
        locks: [{ name: 'home', holder: 'pay-1:41:ab12cd', host: 'pay-1', heartbeatAt: 95_000 }],
        leases: [
          { owner: 'pay-1:41:ab12cd', rows: 3, until: 130_000 },
          { owner: 'pay-1:52:zz9', rows: 2, until: 120_000 },
        ],
      },
      [
        {
          host: 'pay-1',
          seenAt: 95_000,
          clockOffsetMs: undefined,
          clockRoundTripMs: 45_000,
          holds: ['home'],
          leased: { rows: 5, until: 130_000 },
        },
        {
          host: 'pay-2',
          seenAt: 99_000,
          clockOffsetMs: 1_500,
          clockRoundTripMs: 4,
          holds: [],
          leased: undefined,
        },
      ],
    ],
    [
      'a host known only by its leases, its name with colons of its own',
      { ...none, leases: [{ owner: 'db:a:7:x1', rows: 1, until: 110_000 }] },
      [
        {
          host: 'db:a',
          seenAt: undefined,
          clockOffsetMs: undefined,
          clockRoundTripMs: undefined,
          holds: [],
          leased: { rows: 1, until: 110_000 },
        },
      ],
    ],
  ] as const)('%s', (_, seen, hosts) => {
    expect(hostsAtWork(seen as HostsSeen)).toStrictEqual(hosts);
  });
});
