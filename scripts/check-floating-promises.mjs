// Refuses a promise nobody waits for, in src/ and test/ (run by `npm run lint`): a
// statement whose value is a promise not awaited, returned or explicitly `void`ed; a
// promise read as a condition (`if (journal.approveBatch(id))`, always true); a promise
// in a template; a function returning a promise where its caller expects no value or a
// boolean (a listener, a timer, `.filter`), so the promise is dropped. The journal
// answers through promises: a missed await on a `sending` mark would let a request leave
// before the mark is durable, and nothing else would say so.
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const configPath = ts.findConfigFile(root, ts.sys.fileExists, 'tsconfig.json');
if (configPath === undefined) throw new Error(`no tsconfig.json in ${root}`);
const { config } = ts.readConfigFile(configPath, ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();

const partsOf = (type) => (type.isUnion() ? type.types : [type]);
const isThenablePart = (part) => {
  if ((part.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0) return false;
  const then = checker.getPropertyOfType(checker.getApparentType(part), 'then');
  return then !== undefined && checker.getTypeOfSymbol(then).getCallSignatures().length > 0;
};
/** Some of its values are promises: a statement of it may drop one. */
const isThenable = (type) => partsOf(type).some(isThenablePart);
const thenableAt = (node) => isThenable(checker.getTypeAtLocation(node));
// Every value a promise: testing it is always true. (`T | Promise<T>`, or a promise that
// may be undefined, is tested on purpose.)
const alwaysThenableAt = (node) => partsOf(checker.getTypeAtLocation(node)).every(isThenablePart);
// `.catch(handler)` and `.then(onFulfilled, onRejected)` handle what they are given.
const handlesRejection = (expression) =>
  ts.isCallExpression(expression) &&
  ts.isPropertyAccessExpression(expression.expression) &&
  ((expression.expression.name.text === 'catch' && expression.arguments.length === 1) ||
    (expression.expression.name.text === 'then' && expression.arguments.length === 2));

// What a caller does with the value of a function it is given: nothing, or a truth.
const DROPS_OR_TESTS =
  ts.TypeFlags.Void | ts.TypeFlags.Undefined | ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLike;
// Predicates typed as returning `unknown` (so `unknown` alone cannot tell them from a test
// hook that awaits what it is given), whose answer is read as a truth.
const PREDICATES = new Set([
  'filter',
  'some',
  'every',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
]);
const isPredicate = (fn) =>
  ts.isCallExpression(fn.parent) &&
  fn.parent.arguments[0] === fn &&
  ts.isPropertyAccessExpression(fn.parent.expression) &&
  PREDICATES.has(fn.parent.expression.name.text);
const expectsNoPromise = (fn) => {
  if (isPredicate(fn)) return true;
  const contextual = checker.getContextualType(fn);
  if (contextual === undefined) return false;
  const returns = contextual.getCallSignatures().map((signature) => signature.getReturnType());
  return (
    returns.length > 0 &&
    returns.every(
      (type) =>
        !isThenable(type) && partsOf(type).every((part) => (part.flags & DROPS_OR_TESTS) !== 0),
    )
  );
};
const returnsThenable = (fn) =>
  checker
    .getTypeAtLocation(fn)
    .getCallSignatures()
    .some((signature) => isThenable(signature.getReturnType()));

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);
const TRUTH_OPERATORS = new Set([
  ts.SyntaxKind.AmpersandAmpersandToken,
  ts.SyntaxKind.BarBarToken,
  ts.SyntaxKind.QuestionQuestionToken,
]);

// Where the caller takes any value at all (out.data, a logger), a promise passes unseen.
const takesAnything = (node) => {
  const contextual = checker.getContextualType(node);
  return (
    contextual !== undefined && (contextual.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) !== 0
  );
};
// A `return` in a try (or its catch) that has a catch or finally, in the same function.
const insideTryOfItsFunction = (node) => {
  for (let at = node; at.parent !== undefined; at = at.parent) {
    if (ts.isFunctionLike(at.parent)) return false;
    if (ts.isTryStatement(at.parent) && at === at.parent.tryBlock) return true;
    if (ts.isCatchClause(at.parent) && at.parent.parent.finallyBlock !== undefined) return true;
  }
  return false;
};

const findings = [];
const report = (node, what) => {
  const file = node.getSourceFile();
  const { line, character } = file.getLineAndCharacterOfPosition(node.getStart());
  findings.push(`${relative(root, file.fileName)}:${line + 1}:${character + 1}: ${what}`);
};

function visit(node) {
  if (ts.isExpressionStatement(node)) {
    const expression = node.expression;
    const assigns =
      ts.isBinaryExpression(expression) && ASSIGNMENTS.has(expression.operatorToken.kind);
    if (
      !ts.isVoidExpression(expression) &&
      !assigns &&
      !handlesRejection(expression) &&
      thenableAt(expression)
    ) {
      report(node, 'a promise left floating: await it, return it, or `void` it saying why');
    }
  }
  const condition =
    ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node)
      ? node.expression
      : ts.isForStatement(node)
        ? node.condition
        : ts.isConditionalExpression(node)
          ? node.condition
          : ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken
            ? node.operand
            : ts.isBinaryExpression(node) && TRUTH_OPERATORS.has(node.operatorToken.kind)
              ? node.left
              : undefined;
  if (condition !== undefined && alwaysThenableAt(condition)) {
    report(condition, 'a promise read as a condition (always true): await it');
  }
  if (ts.isTemplateSpan(node) && thenableAt(node.expression)) {
    report(node.expression, 'a promise written into text: await it');
  }
  if (
    (ts.isSpreadAssignment(node) || ts.isSpreadElement(node)) &&
    alwaysThenableAt(node.expression)
  ) {
    report(node.expression, 'a promise spread (its fields are not there yet): await it');
  }
  if (
    ts.isExpression(node) &&
    (ts.isCallExpression(node.parent) ||
      ts.isPropertyAssignment(node.parent) ||
      ts.isShorthandPropertyAssignment(node.parent)) &&
    node.parent.expression !== node &&
    node.parent.name !== node &&
    takesAnything(node) &&
    alwaysThenableAt(node)
  ) {
    report(node, 'a promise given where any value is taken (data, a log): await it');
  }
  if (
    ts.isReturnStatement(node) &&
    node.expression &&
    !ts.isAwaitExpression(node.expression) &&
    insideTryOfItsFunction(node) &&
    thenableAt(node.expression)
  ) {
    report(
      node,
      'a promise returned from inside a try: its failure and its end escape the try; return await it',
    );
  }
  if (
    (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) &&
    returnsThenable(node) &&
    expectsNoPromise(node)
  ) {
    report(node, 'a promise returned where the caller drops it or reads it as a truth');
  }
  if (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'expect' &&
    node.arguments[0] !== undefined &&
    !(
      ts.isPropertyAccessExpression(node.parent) &&
      ['resolves', 'rejects'].includes(node.parent.name.text)
    ) &&
    alwaysThenableAt(node.arguments[0])
  ) {
    report(
      node.arguments[0],
      'a promise checked as a value (`expect(promise).toBeTruthy()` passes): await it, or use .resolves',
    );
  }
  ts.forEachChild(node, visit);
}

for (const file of program.getSourceFiles()) {
  if (file.isDeclarationFile || relative(root, file.fileName).startsWith('node_modules')) continue;
  visit(file);
}
for (const finding of findings) console.error(finding);
if (findings.length > 0) {
  console.error(`${findings.length} promise(s) nobody waits for`);
  process.exitCode = 1;
}
