/**
 * The SQLite store holds storage and SQL only: what a person reads (an audit's reason, a
 * row's message, how to restore a journal) is a value it stores, said by the catalogs or
 * the journal's own words outside src/journal/sqlite/. Every string and template literal
 * there that is prose (words separated by spaces) and not SQL fails here, but the few
 * named below.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SQLITE = resolve(import.meta.dirname, '../../src/journal/sqlite');

/**
 * Errors for a developer, in logs: a person reads what the error's kind says (the CLI's
 * ending of a JournalError), never these words alone.
 */
const ERRORS_FOR_DEVELOPERS = new Set(['JournalError', 'Error']);

/** Prose allowed outside an error's construction, by file and the function it is in, with why. */
const ALLOWED: readonly { file: string; in: string; reason: string }[] = [];

/** SQL: a statement, a fragment of one (a condition, a join) or a pragma's setting. */
const SQL =
  /\b(SELECT|INSERT|UPDATE|DELETE|WHERE|FROM|JOIN|UNION|VALUES|VACUUM|AND|OR|IN|IS NULL|ORDER BY|LIMIT|CASE|WHEN|NULLIF)\b|^\w+ = \S+$/;
/** A comment inside SQL. */
const SQL_COMMENT = /--.*$/gm;
/** Words separated by spaces (a substitution counts as a word). */
const PROSE = /[A-Za-z']{2,} +[A-Za-z']/;
/** A quoted text inside SQL, which may be prose itself. */
const SQL_TEXT = /'([^']*)'/g;

interface Literal {
  file: string;
  line: number;
  text: string;
  in: string | undefined;
  inError: boolean;
}

function literalsOf(file: string): Literal[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(join(SQLITE, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: Literal[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isLiteralTypeNode(node)) return;
    const text =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((span) => `x${span.literal.text}`)].join('')
          : undefined;
    if (text !== undefined) {
      found.push({
        file,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
        text,
        in: enclosingFunction(node),
        inError: builtAsError(node),
      });
      if (ts.isTemplateExpression(node)) {
        // A substitution may hold literals of its own.
        node.templateSpans.forEach((span) => visit(span.expression));
      }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function enclosingFunction(node: ts.Node): string | undefined {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isFunctionDeclaration(at) && at.name) return at.name.text;
  }
  return undefined;
}

/** Whether the literal is (a part of) the message of an error made on the spot. */
function builtAsError(node: ts.Node): boolean {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isNewExpression(at) && ts.isIdentifier(at.expression)) {
      return ERRORS_FOR_DEVELOPERS.has(at.expression.text);
    }
    if (ts.isFunctionLike(at) || ts.isBlock(at)) return false;
  }
  return false;
}

/** The prose of a literal: itself, or the quoted texts of SQL. */
function proseOf(text: string): string | undefined {
  if (SQL.test(text)) {
    return [...text.replace(SQL_COMMENT, '').matchAll(SQL_TEXT)]
      .map(([, quoted = '']) => quoted)
      .find((quoted) => PROSE.test(quoted));
  }
  return PROSE.test(text) ? text : undefined;
}

describe('src/journal/sqlite/', () => {
  const files = readdirSync(SQLITE).filter((file) => file.endsWith('.ts'));

  it('holds no sentence: its literals are SQL, names, or an error for a developer', () => {
    const prose = files
      .flatMap(literalsOf)
      .filter((literal) => !literal.inError)
      .filter((literal) => !ALLOWED.some((a) => a.file === literal.file && a.in === literal.in))
      .flatMap((literal) => {
        const words = proseOf(literal.text);
        return words === undefined ? [] : [`${literal.file}:${literal.line}: ${words}`];
      });
    expect(prose).toEqual([]);
  });

  it('makes no sentence of a value: the catalogs are said outside it', () => {
    const saying = files.filter((file) =>
      /from '[./]*messages\/(say|en|pt-BR|catalog)\.js'/.test(
        readFileSync(join(SQLITE, file), 'utf8'),
      ),
    );
    expect(saying).toEqual([]);
  });

  it('tells prose from SQL', () => {
    expect(proseOf('SELECT * FROM batches WHERE id = ?')).toBeUndefined();
    expect(proseOf('synchronous = FULL')).toBeUndefined();
    expect(proseOf('value_cents, pix_key_type, document')).toBeUndefined();
    expect(proseOf("message || '; corrected in ' || @file WHERE 1")).toBe('; corrected in ');
    expect(proseOf('journaled from batch x, line x')).toBe('journaled from batch x, line x');
    expect(proseOf('batch x')).toBe('batch x');
  });

  it('names only exceptions that are there', () => {
    const literals = files.flatMap(literalsOf);
    for (const allowed of ALLOWED) {
      expect(literals.some((l) => l.file === allowed.file && l.in === allowed.in)).toBe(true);
    }
  });
});
