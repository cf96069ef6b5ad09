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
 * The journal's time in milliseconds: the clock it was opened with (a command's, which
 * tests move), or else the database's (`now()`, the transaction's start).
 */
export const AT = `COALESCE(@now::bigint, floor(extract(epoch FROM now()) * 1000)::bigint)`;

/** States as an SQL list: constants of ours, never input. */
export const inList = (states: readonly string[]): string =>
  states.map((state) => `'${state}'`).join(', ');
