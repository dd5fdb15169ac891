import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printExpression } from '@flowing/codegen';
import { compileExpression, parseExpression } from '@flowing/spec';

const LEAVES = ['context.a', 'context.b', 'context.s', 'context.f', 'context.m', '0', '1', '2', "'x'", 'true', 'undefined'];
const BINARY = ['==', '!=', '<', '<=', '>', '>=', '&&', '||', '??', '+', '-', '*', '/', '%'];

/** Fully parenthesised expressions, so the parsed tree is exactly the one drawn. */
const expression: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...LEAVES),
    fc.tuple(tie('node'), fc.constantFrom(...BINARY), tie('node')).map(([l, op, r]) => `(${l} ${op} ${r})`),
    fc.tuple(fc.constantFrom('!', '-', '+'), tie('node')).map(([op, x]) => `${op}(${x})`),
    fc.tuple(tie('node'), tie('node'), tie('node')).map(([t, c, a]) => `(${t} ? ${c} : ${a})`),
    fc.tuple(tie('node'), fc.constantFrom("['x', 1]", '[2, true]')).map(([x, list]) => `(${x} in ${list})`),
  ),
})).node;

const contexts = fc.record({
  a: fc.integer({ min: -3, max: 3 }),
  b: fc.integer({ min: -3, max: 3 }),
  s: fc.constantFrom('x', '', 'y'),
  f: fc.boolean(),
  m: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
});

/** Runs compiled TypeScript (with its one type assertion removed) as JavaScript. */
function run(code: string, context: unknown): unknown {
  return new Function('context', `return ${code.replaceAll(' as readonly unknown[]', '')};`)(context);
}

describe('expressions in generated code', () => {
  it('print with only the parentheses precedence needs, and evaluate like the spec compiler output', () => {
    fc.assert(
      fc.property(expression, contexts, (source, context) => {
        const parsed = parseExpression(source, ['context']);
        fc.pre(parsed.ok);
        if (!parsed.ok) return;
        const reference = run(compileExpression(parsed.ast), context);
        const printed = printExpression(source, 'context');
        expect(Object.is(run(printed, context), reference), `${printed} vs ${compileExpression(parsed.ast)}`).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads as written: no parentheses around a left-nested chain, a comparison or a member', () => {
    expect(printExpression("'A refund of ' + context.order.total + ' for order ' + (context.orderId ?? '')", 'context')).toBe(
      '"A refund of " + context.order?.total + " for order " + (context.orderId ?? "")',
    );
    expect(printExpression("output.label == 'other' && !context.done", 'done')).toBe('output.label === "other" && !context.done');
    expect(printExpression('context.a - (context.b - 1)', 'context')).toBe('context.a - (context.b - 1)');
    expect(printExpression('-(-context.a)', 'context')).toBe('-(-context.a)');
    expect(printExpression('(context.a || context.b) ?? 1', 'context')).toBe('(context.a || context.b) ?? 1');
  });
});
