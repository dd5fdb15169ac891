import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression, evaluateExpression, parseExpression, parseTemplate, type ExpressionRoot } from '../../spec/index.ts';

const ALL: ExpressionRoot[] = ['context', 'event', 'output', 'error'];

describe('expression language', () => {
  const accepted = [
    "output.label == 'refund'",
    'context.count + 1 >= 3 && !event.urgent',
    "context.status in ['shipped', 'delivered']",
    'context.items[0].price * 2 - 1 / 4 % 3',
    "error.code != 'ORDER_NOT_FOUND' || context.retries < 2",
    "context.name ?? 'guest'",
    "context.vip ? 'gold' : 'standard'",
    '-context.delta',
    'null',
    'true',
  ];
  for (const source of accepted) {
    it(`accepts ${source}`, () => {
      expect(parseExpression(source, ALL).ok).toBe(true);
    });
  }

  const refused: Array<[string, string]> = [
    ['context.name.toUpperCase()', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['alert(1)', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['context.x = 1', 'SPEC_EXPRESSION_SYNTAX'],
    ['context.__proto__', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['context.a.constructor', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['event.prototype', 'SPEC_EXPRESSION_FORBIDDEN'],
    ["context['__proto__']", 'SPEC_EXPRESSION_FORBIDDEN'],
    ['context[event.key]', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['this.x', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['globalThis.process', 'SPEC_EXPRESSION_UNKNOWN_ROOT'],
    ['process.env.SECRET', 'SPEC_EXPRESSION_UNKNOWN_ROOT'],
    ['window', 'SPEC_EXPRESSION_UNKNOWN_ROOT'],
    ['a; b', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['context.a, context.b', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['context.a | 1', 'SPEC_EXPRESSION_SYNTAX'],
    ['~context.a', 'SPEC_EXPRESSION_SYNTAX'],
    ['context.a in context.b', 'SPEC_EXPRESSION_FORBIDDEN'],
    ['/x/.test(context.a)', 'SPEC_EXPRESSION_SYNTAX'],
    ['`${context.a}`', 'SPEC_EXPRESSION_SYNTAX'],
    ['', 'SPEC_EXPRESSION_SYNTAX'],
    ['context.', 'SPEC_EXPRESSION_SYNTAX'],
  ];
  for (const [source, code] of refused) {
    it(`refuses ${JSON.stringify(source)} with ${code}`, () => {
      const result = parseExpression(source, ALL);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe(code);
    });
  }

  it('refuses a root that is not available at that place', () => {
    const result = parseExpression("output.label == 'x'", ['context', 'event']);
    expect(!result.ok && result.error.code).toBe('SPEC_EXPRESSION_UNKNOWN_ROOT');
  });

  it('compiles equality to strict equality, roots through the mapping, and deep access optional-chained', () => {
    const parsed = parseExpression("output.order.status == 'shipped'", ['output']);
    expect(parsed.ok && compileExpression(parsed.ast, { output: 'event.output' })).toBe('(event.output.order?.status === "shipped")');
  });

  it('compiled code and the evaluator agree on random scopes', () => {
    const parsed = parseExpression("context.a + context.b > 3 && (context.tag in ['x', 'y'] || !context.flag)", ['context']);
    if (!parsed.ok) throw new Error('fixture does not parse');
    const compiled = new Function('context', `return ${compileExpression(parsed.ast).replace(' as readonly unknown[]', '')};`);
    fc.assert(
      fc.property(fc.record({ a: fc.integer(), b: fc.integer(), tag: fc.constantFrom('x', 'y', 'z'), flag: fc.boolean() }), (context) => {
        expect(Boolean(compiled(context))).toBe(Boolean(evaluateExpression(parsed.ast, { context })));
      }),
    );
  });

  it('reads string lengths and array items like the compiled code does', () => {
    const parsed = parseExpression('context.name.length + context.items.length + (context.items[1] ?? 0)', ['context']);
    if (!parsed.ok) throw new Error('fixture does not parse');
    const compiled = new Function('context', `return ${compileExpression(parsed.ast)};`);
    const context = { name: 'Ada', items: [4, 5] };
    expect(evaluateExpression(parsed.ast, { context })).toBe(compiled(context));
    expect(evaluateExpression(parsed.ast, { context })).toBe(10);
  });

  it('parses prompt templates and refuses unclosed or empty holes', () => {
    const ok = parseTemplate('Order {{ context.orderId }} is {{context.status}}.', ['context']);
    expect(ok.ok && ok.parts.map((p) => p.kind)).toEqual(['text', 'hole', 'text', 'hole', 'text']);
    const unclosed = parseTemplate('Order {{ context.orderId', ['context']);
    expect(!unclosed.ok && unclosed.error.code).toBe('SPEC_TEMPLATE_SYNTAX');
    const empty = parseTemplate('Order {{ }}', ['context']);
    expect(!empty.ok && empty.error.code).toBe('SPEC_TEMPLATE_SYNTAX');
    const call = parseTemplate('{{ context.a.b() }}', ['context']);
    expect(!call.ok && call.error.code).toBe('SPEC_EXPRESSION_FORBIDDEN');
  });

  it('never throws on arbitrary input (fuzz)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (source) => {
        const result = parseExpression(source, ALL);
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('append(conversation, text)', () => {
  it('parses to an append node and evaluates to the list with a user message added, leaving the list as it was', () => {
    const parsed = parseExpression('append(context.chat, event.text)', ['context', 'event']);
    expect(parsed.ok && parsed.ast.kind).toBe('append');
    const chat = [{ role: 'user', content: 'hi' }];
    const value = parsed.ok ? evaluateExpression(parsed.ast, { context: { chat }, event: { text: 'again' } }) : undefined;
    expect(value).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'again' },
    ]);
    expect(chat).toHaveLength(1);
  });

  it('compiles to a new list, not a call of anything named in the spec', () => {
    const parsed = parseExpression('append(context.chat, event.text)', ['context', 'event']);
    expect(parsed.ok && compileExpression(parsed.ast)).toBe('[...context.chat, { role: "user" as const, content: event.text }]');
  });

  it('refuses any other function name, a method call and a wrong number of arguments', () => {
    expect(parseExpression('push(context.chat, event.text)', ['context', 'event'])).toMatchObject({
      ok: false,
      error: { code: 'SPEC_EXPRESSION_FORBIDDEN' },
    });
    expect(parseExpression('context.chat.append(event.text)', ['context', 'event'])).toMatchObject({
      ok: false,
      error: { code: 'SPEC_EXPRESSION_FORBIDDEN' },
    });
    expect(parseExpression('append(context.chat, event.text, 1)', ['context', 'event'])).toMatchObject({
      ok: false,
      error: { code: 'SPEC_EXPRESSION_SYNTAX' },
    });
  });
});
