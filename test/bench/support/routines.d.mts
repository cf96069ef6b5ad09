/** A home a routine runs in: test/support/pass-home.ts's, or the benchmark's on dist/. */
export interface RoutineHome {
  drop(name: string, lines: readonly string[]): void;
  advance(ms: number): void;
  run(): Promise<{ files: { file: string; rows: { held?: number } }[] }>;
  ledger(): readonly { object: string; orderId?: string | null }[];
}

export interface RoutineFigures {
  routine: string;
  reference: boolean;
  files: number;
  rows: number;
  held: number;
  heldPercent: number;
  needingAPerson: number;
  duplicateRows: number;
  duplicatesHeld: number;
  duplicatesPaid: number;
  paidTwice: number;
  paid: number;
}

export type RoutineName = 'weekly' | 'refunds' | 'payroll';

export const ROUTINES: Record<RoutineName, { full: number; smoke: number }>;

export function runRoutine(
  home: RoutineHome,
  name: RoutineName,
  count: number,
  options?: { reference?: boolean },
): Promise<RoutineFigures>;
