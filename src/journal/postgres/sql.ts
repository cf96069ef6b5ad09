/**
 * Statements of the PostgreSQL journal written with named parameters (`@orderId`), as the
 * SQLite journal's are, made positional once; each is prepared by its name on a
 * connection the first time it runs there (node-postgres's named statements).
 */

/** A statement, prepared by `name`, taking the parameters of `P`. */
export interface Statement<P extends object> {
  name: string;
  text: string;
  order: readonly (keyof P & string)[];
}

export function statement<P extends object = object>(name: string, text: string): Statement<P> {
  const order: string[] = [];
  const positional = text.replace(/(?<![:@])@([A-Za-z]\w*)/g, (_, parameter: string) => {
    const at = order.indexOf(parameter);
    if (at >= 0) return `$${at + 1}`;
    order.push(parameter);
    return `$${order.length}`;
  });
  return { name, text: positional, order: order as (keyof P & string)[] };
}

/** The values of `params` in the statement's order. */
export function valuesOf<P extends object>(sql: Statement<P>, params: P): unknown[] {
  return sql.order.map((parameter) => params[parameter] ?? null);
}

/**
 * The cluster's time in milliseconds: the database's `now()` (the transaction's start),
 * whatever a host's clock reads. Leases and the home lock's heartbeats are judged by it alone.
 */
export const CLUSTER_NOW = `floor(extract(epoch FROM now()) * 1000)::bigint`;

/**
 * The business's time in milliseconds (when a row was journaled, sent, moved: the days the
 * rules on who is paid count): the clock the journal was opened with (a command's, which
 * tests move), or else the cluster's.
 */
export const AT = `COALESCE(@now::bigint, ${CLUSTER_NOW})`;

/** States as an SQL list: constants of ours, never input. */
export const inList = (states: readonly string[]): string =>
  states.map((state) => `'${state}'`).join(', ');
