/**
 * Which column holds what: headings matched against English and Portuguese aliases
 * after folding case, accents, units in parentheses, punctuation and spacing.
 */
import { nearestOf } from './near-miss.js';
import {
  FIELD_ALIASES,
  FIELD_LABELS,
  PAYOUT_FIELDS,
  type PayoutField,
} from '../messages/fields.js';
import { foldHeading } from './fold.js';
import type { Said } from '../messages/said.js';

/**
 * The name a `headings` setting gives each of our columns: its first alias, the heading
 * docs and the template use (`amount` for reais, `value` for cents).
 */
export const COLUMN_NAMES: Readonly<Record<string, PayoutField>> = Object.fromEntries(
  PAYOUT_FIELDS.map((field) => [FIELD_ALIASES[field][0] as string, field]),
);

/**
 * What is wrong with a `headings` setting (an accountant's heading to one of our column
 * names), a sentence each; none when it can be used. A heading that is already one of
 * ours for another column would make a file mean two things, so it is refused.
 */
export function headingMapProblems(map: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const names = Object.keys(COLUMN_NAMES);
  const seen = new Map<string, string>();
  for (const [heading, name] of Object.entries(map)) {
    const field = COLUMN_NAMES[name];
    if (heading.trim() === '')
      problems.push(`a heading may not be empty (it is read as "${name}")`);
    if (field === undefined) {
      const meant = nearestOf(name, names);
      problems.push(
        `"${heading}": "${name}" is not one of our columns${meant ? `; did you mean ${meant}?` : ''} (one of: ${names.join(', ')})`,
      );
      continue;
    }
    const folded = foldHeading(heading);
    const builtIn = BY_FOLDED.get(folded);
    if (builtIn !== undefined && builtIn !== field) {
      problems.push(
        `"${heading}" is already a heading of ours for ${FIELD_LABELS[builtIn]}; it cannot also be read as ${name}`,
      );
    }
    const twin = seen.get(folded);
    if (twin !== undefined)
      problems.push(
        `"${twin}" and "${heading}" are the same heading (case, accents and spacing aside): keep one`,
      );
    seen.set(folded, heading);
  }
  return problems;
}

/**
 * The headings of `payouts template`: every column we read, as a Brazilian payroll names
 * it; each is one of FIELD_ALIASES (a test holds them to it). The amount is in reais.
 */
export const TEMPLATE_HEADINGS: Readonly<Partial<Record<PayoutField, string>>> = {
  orderId: 'ID do pagamento',
  name: 'Nome',
  cpfCnpj: 'CPF/CNPJ',
  pixKeyType: 'Tipo de chave',
  pixKey: 'Chave Pix',
  amountReais: 'Valor',
  email: 'E-mail',
  phone: 'Telefone',
};

/** A reference column's place among FIELD_ALIASES.reference (a configured one comes first). */
function referenceRank(column: Column): number {
  if (column.configured) return -1;
  const folded = foldHeading(column.heading);
  return FIELD_ALIASES.reference.findIndex((alias) => foldHeading(alias) === folded);
}

const BY_FOLDED = new Map<string, PayoutField>(
  PAYOUT_FIELDS.flatMap((field) =>
    FIELD_ALIASES[field].map((alias) => [foldHeading(alias), field] as const),
  ),
);

// E-mail and phone may come from the Pix key or the configuration (see the row's check).
const REQUIRED: readonly PayoutField[] = ['name', 'cpfCnpj', 'pixKey'];
export const MAX_COLUMNS = 1000;

export interface Column {
  index: number;
  /** The heading as the file writes it, for messages. */
  heading: string;
  /** Read by the `headings` setting, not by a heading of ours. */
  configured?: true;
}
export type ColumnMap = Partial<Record<PayoutField, Column>>;

export type HeaderReading =
  { ok: true; columns: ColumnMap; ignored: string[] } | { ok: false; problems: Said[] };

/**
 * The columns of a header. `own`: the `headings` setting, an accountant's headings to our
 * column names (checked by headingMapProblems when the config is read).
 */
export function mapHeader(
  headings: readonly string[],
  own: Readonly<Record<string, string>> = {},
): HeaderReading {
  const configured = new Map(
    Object.entries(own).map(([heading, name]) => [foldHeading(heading), COLUMN_NAMES[name]]),
  );
  if (headings.length > MAX_COLUMNS) {
    return {
      ok: false,
      problems: [{ code: 'tooManyColumns', count: headings.length, max: MAX_COLUMNS }],
    };
  }
  const columns: ColumnMap = {};
  const ignored: string[] = [];
  const problems: Said[] = [];
  headings.forEach((heading, index) => {
    const folded = foldHeading(heading);
    const field = configured.get(folded) ?? BY_FOLDED.get(folded);
    if (field === undefined) {
      if (heading.trim() !== '') ignored.push(heading.trim());
      return;
    }
    const column: Column = configured.has(folded)
      ? { index, heading: heading.trim(), configured: true }
      : { index, heading: heading.trim() };
    const earlier = columns[field];
    if (earlier && field === 'reference') {
      // An invoice and its purchase order both name the payment: the first alias wins,
      // and a file that has both stays usable.
      const first = referenceRank(column) < referenceRank(earlier);
      columns.reference = first ? column : earlier;
      ignored.push(first ? earlier.heading : column.heading);
      return;
    }
    if (earlier) {
      problems.push({
        code: 'sameColumnTwice',
        first: earlier.heading,
        second: heading.trim(),
        field,
      });
      return;
    }
    columns[field] = column;
  });
  if (columns.valueCents && columns.amountReais) {
    problems.push({
      code: 'twoAmountColumns',
      cents: columns.valueCents.heading,
      reais: columns.amountReais.heading,
    });
  }
  const missing = REQUIRED.filter((field) => !columns[field]);
  if (!columns.valueCents && !columns.amountReais) {
    missing.push('amountReais');
  }
  if (missing.length > 0) problems.push({ code: 'missingColumns', fields: missing });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, columns, ignored };
}
