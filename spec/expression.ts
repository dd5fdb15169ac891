import jsep from 'jsep';
import type { SpecProblemCode } from './problems.ts';

/**
 * The Flowing expression language: literals, member access on a few roots (context, event, output, error),
 * comparisons, `&&`, `||`, `??`, `!`, `in [..]`, arithmetic, `a ? b : c` and `append(conversation, text)` (the list
 * with a user message added). No other calls, no assignment, no `this`, no prototype access. It is parsed with jsep and every node is checked against a whitelist before it is compiled.
 */
export type ExpressionRoot = 'context' | 'event' | 'output' | 'error';

jsep.addBinaryOp('in', 7);
for (const op of ['>>>', '>>', '<<', '|', '^', '&']) jsep.removeBinaryOp(op);
jsep.removeUnaryOp('~');

const BINARY_OPERATORS = new Set(['==', '!=', '===', '!==', '<', '<=', '>', '>=', '&&', '||', '??', '+', '-', '*', '/', '%', 'in']);
const UNARY_OPERATORS = new Set(['!', '-', '+']);
const FORBIDDEN_PROPERTIES = new Set([
  '__proto__',
  'constructor',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);
const MAX_EXPRESSION_LENGTH = 2000;
const MAX_DEPTH = 64;

export type ExprNode =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'root'; name: ExpressionRoot }
  | { kind: 'member'; object: ExprNode; property: string | number }
  | { kind: 'array'; elements: ExprNode[] }
  | { kind: 'unary'; operator: string; argument: ExprNode }
  | { kind: 'binary'; operator: string; left: ExprNode; right: ExprNode }
  | { kind: 'conditional'; test: ExprNode; consequent: ExprNode; alternate: ExprNode }
  /** `append(list, text)`: a new conversation list ending with `{ role: 'user', content: text }`. */
  | { kind: 'append'; list: ExprNode; content: ExprNode };

/** The one function expressions may call. */
export const APPEND_FUNCTION = 'append';

export interface ExpressionError {
  code: Extract<
    SpecProblemCode,
    'SPEC_EXPRESSION_SYNTAX' | 'SPEC_EXPRESSION_FORBIDDEN' | 'SPEC_EXPRESSION_UNKNOWN_ROOT' | 'SPEC_TEMPLATE_SYNTAX'
  >;
  message: string;
}

export type ParseResult = { ok: true; ast: ExprNode } | { ok: false; error: ExpressionError };

class Refusal extends Error {
  constructor(readonly detail: ExpressionError) {
    super(detail.message);
  }
}

function refuse(code: ExpressionError['code'], message: string): never {
  throw new Refusal({ code, message });
}

/**
 * Parses an expression and checks it against the whitelist and the roots allowed where it appears.
 * @example parseExpression("output.label == 'refund'", ['context', 'output'])
 */
export function parseExpression(source: string, roots: readonly ExpressionRoot[]): ParseResult {
  try {
    if (typeof source !== 'string' || source.trim() === '') refuse('SPEC_EXPRESSION_SYNTAX', 'expression is empty');
    if (source.length > MAX_EXPRESSION_LENGTH) {
      refuse('SPEC_EXPRESSION_SYNTAX', `expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
    }
    let tree: jsep.Expression;
    try {
      tree = jsep(source);
    } catch (err) {
      refuse('SPEC_EXPRESSION_SYNTAX', `cannot parse expression: ${(err as Error).message}`);
    }
    return { ok: true, ast: convert(tree, roots, 0) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, error: err.detail };
    throw err;
  }
}

function convert(node: jsep.Expression, roots: readonly ExpressionRoot[], depth: number): ExprNode {
  if (depth > MAX_DEPTH) refuse('SPEC_EXPRESSION_FORBIDDEN', `expression nests deeper than ${MAX_DEPTH} levels`);
  const next = (child: jsep.Expression) => convert(child, roots, depth + 1);
  switch (node.type) {
    case 'Literal': {
      const value = (node as jsep.Literal).value;
      if (value instanceof RegExp || value === undefined) refuse('SPEC_EXPRESSION_FORBIDDEN', 'regular expressions are not allowed');
      if (typeof value === 'number' && !Number.isFinite(value)) refuse('SPEC_EXPRESSION_SYNTAX', 'number literal is not finite');
      return { kind: 'literal', value: value as string | number | boolean | null };
    }
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      if ((roots as readonly string[]).includes(name)) return { kind: 'root', name: name as ExpressionRoot };
      if (name === 'undefined') return { kind: 'literal', value: null };
      return refuse('SPEC_EXPRESSION_UNKNOWN_ROOT', `unknown name '${name}': expressions here may read ${roots.join(', ')}`);
    }
    case 'MemberExpression': {
      const member = node as jsep.MemberExpression;
      const object = next(member.object);
      if (object.kind !== 'root' && object.kind !== 'member') {
        refuse('SPEC_EXPRESSION_FORBIDDEN', 'member access is only allowed on context, event, output or error');
      }
      let property: string | number;
      if (!member.computed) {
        property = (member.property as jsep.Identifier).name;
      } else {
        const key = member.property as jsep.Literal;
        if (key.type !== 'Literal' || typeof key.value !== 'number' || !Number.isInteger(key.value) || key.value < 0) {
          refuse('SPEC_EXPRESSION_FORBIDDEN', 'computed access is only allowed with a non-negative integer literal, e.g. items[0]');
        }
        property = key.value;
      }
      if (typeof property === 'string' && FORBIDDEN_PROPERTIES.has(property)) {
        refuse('SPEC_EXPRESSION_FORBIDDEN', `access to '${property}' is not allowed`);
      }
      if (typeof property === 'string' && !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(property)) {
        refuse('SPEC_EXPRESSION_FORBIDDEN', `property name '${property}' is not an identifier`);
      }
      return { kind: 'member', object, property };
    }
    case 'ArrayExpression': {
      const elements = (node as jsep.ArrayExpression).elements;
      if (elements.some((e) => e === null)) refuse('SPEC_EXPRESSION_SYNTAX', 'array holes are not allowed');
      return { kind: 'array', elements: elements.map((e) => next(e as jsep.Expression)) };
    }
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      if (!UNARY_OPERATORS.has(unary.operator)) refuse('SPEC_EXPRESSION_FORBIDDEN', `operator '${unary.operator}' is not allowed`);
      return { kind: 'unary', operator: unary.operator, argument: next(unary.argument) };
    }
    case 'BinaryExpression': {
      const binary = node as jsep.BinaryExpression;
      if (!BINARY_OPERATORS.has(binary.operator)) refuse('SPEC_EXPRESSION_FORBIDDEN', `operator '${binary.operator}' is not allowed`);
      const right = next(binary.right);
      if (binary.operator === 'in' && right.kind !== 'array') {
        refuse('SPEC_EXPRESSION_FORBIDDEN', "'in' needs an array literal on its right, e.g. x in ['a', 'b']");
      }
      return { kind: 'binary', operator: binary.operator, left: next(binary.left), right };
    }
    case 'ConditionalExpression': {
      const cond = node as jsep.ConditionalExpression;
      return { kind: 'conditional', test: next(cond.test), consequent: next(cond.consequent), alternate: next(cond.alternate) };
    }
    case 'CallExpression': {
      const callExpr = node as jsep.CallExpression;
      const callee = callExpr.callee as jsep.Identifier;
      if (callee.type !== 'Identifier' || callee.name !== APPEND_FUNCTION)
        refuse(
          'SPEC_EXPRESSION_FORBIDDEN',
          'function calls are not allowed in expressions (only append(conversation, text)); use a named guard or action',
        );
      if (callExpr.arguments.length !== 2)
        refuse('SPEC_EXPRESSION_SYNTAX', `append takes two arguments, a conversation and a text: append(context.conversation, event.text)`);
      return { kind: 'append', list: next(callExpr.arguments[0]!), content: next(callExpr.arguments[1]!) };
    }
    case 'ThisExpression':
      return refuse('SPEC_EXPRESSION_FORBIDDEN', "'this' is not allowed");
    case 'Compound':
    case 'SequenceExpression':
      return refuse('SPEC_EXPRESSION_FORBIDDEN', 'only one expression is allowed (no ; or ,)');
    default:
      refuse('SPEC_EXPRESSION_FORBIDDEN', `${node.type} is not allowed in expressions`);
  }
}

/** How each root is spelled in the generated TypeScript (e.g. `output` -> `event.output`). */
export type RootMapping = Partial<Record<ExpressionRoot, string>>;

/**
 * Compiles a checked expression to TypeScript source. Equality is strict; member access below a root is
 * optional-chained so that absent optional fields read as undefined instead of throwing.
 */
export function compileExpression(node: ExprNode, roots: RootMapping = {}): string {
  switch (node.kind) {
    case 'literal':
      return node.value === null ? 'undefined' : JSON.stringify(node.value);
    case 'root':
      return roots[node.name] ?? node.name;
    case 'member': {
      const object = compileExpression(node.object, roots);
      const access = typeof node.property === 'number' ? `[${node.property}]` : `.${node.property}`;
      return node.object.kind === 'root' ? `${object}${access}` : `${object}?${typeof node.property === 'number' ? '.' : ''}${access}`;
    }
    case 'array':
      return `[${node.elements.map((e) => compileExpression(e, roots)).join(', ')}]`;
    case 'unary':
      return `${node.operator}(${compileExpression(node.argument, roots)})`;
    case 'binary': {
      const left = compileExpression(node.left, roots);
      const right = compileExpression(node.right, roots);
      if (node.operator === 'in') return `(${right} as readonly unknown[]).includes(${left})`;
      const op = node.operator === '==' ? '===' : node.operator === '!=' ? '!==' : node.operator;
      return `(${left} ${op} ${right})`;
    }
    case 'conditional':
      return `(${compileExpression(node.test, roots)} ? ${compileExpression(node.consequent, roots)} : ${compileExpression(node.alternate, roots)})`;
    case 'append':
      return `[...${compileExpression(node.list, roots)}, { role: "user" as const, content: ${compileExpression(node.content, roots)} }]`;
  }
}

/**
 * Evaluates a checked expression against plain values with the semantics of the compiled code (missing values read as
 * undefined). The runtime uses it to show the arguments a person approves; generated machines use the compiled form.
 */
export function evaluateExpression(node: ExprNode, scope: Partial<Record<ExpressionRoot, unknown>>): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value === null ? undefined : node.value;
    case 'root':
      return scope[node.name];
    case 'member': {
      const object = evaluateExpression(node.object, scope);
      if (typeof object === 'string') {
        // Strings expose their length and characters, as in the compiled code; nothing from String.prototype.
        if (node.property === 'length') return object.length;
        return typeof node.property === 'number' ? object[node.property] : undefined;
      }
      if (object === null || typeof object !== 'object') return undefined;
      return Object.hasOwn(object, node.property) ? (object as Record<string | number, unknown>)[node.property] : undefined;
    }
    case 'array':
      return node.elements.map((e) => evaluateExpression(e, scope));
    case 'unary': {
      const value = evaluateExpression(node.argument, scope);
      return node.operator === '!' ? !value : node.operator === '-' ? -(value as number) : +(value as number);
    }
    case 'binary':
      return evaluateBinary(node.operator, node.left, node.right, scope);
    case 'conditional':
      return evaluateExpression(node.test, scope) ? evaluateExpression(node.consequent, scope) : evaluateExpression(node.alternate, scope);
    case 'append': {
      const list = evaluateExpression(node.list, scope);
      return [...(Array.isArray(list) ? list : []), { role: 'user', content: evaluateExpression(node.content, scope) }];
    }
  }
}

function evaluateBinary(op: string, leftNode: ExprNode, rightNode: ExprNode, scope: Partial<Record<ExpressionRoot, unknown>>): unknown {
  const left = evaluateExpression(leftNode, scope);
  if (op === '&&') return left && evaluateExpression(rightNode, scope);
  if (op === '||') return left || evaluateExpression(rightNode, scope);
  if (op === '??') return left ?? evaluateExpression(rightNode, scope);
  const right = evaluateExpression(rightNode, scope) as never;
  const l = left as never;
  switch (op) {
    case '==':
    case '===':
      return l === right;
    case '!=':
    case '!==':
      return l !== right;
    case '<':
      return l < right;
    case '<=':
      return l <= right;
    case '>':
      return l > right;
    case '>=':
      return l >= right;
    case '+':
      return (l as number) + (right as number);
    case '-':
      return l - right;
    case '*':
      return l * right;
    case '/':
      return l / right;
    case '%':
      return l % right;
    case 'in':
      return (right as unknown[]).includes(l);
    default:
      throw new Error(`unreachable operator ${op}`);
  }
}

export type TemplatePart = { kind: 'text'; text: string } | { kind: 'hole'; source: string; ast: ExprNode; offset: number };
export type TemplateResult = { ok: true; parts: TemplatePart[] } | { ok: false; error: ExpressionError };

/**
 * Parses a prompt template with `{{ expression }}` holes.
 * @example parseTemplate('Order {{ context.orderId }} is late', ['context'])
 */
export function parseTemplate(source: string, roots: readonly ExpressionRoot[]): TemplateResult {
  const parts: TemplatePart[] = [];
  let index = 0;
  while (index < source.length) {
    const open = source.indexOf('{{', index);
    if (open === -1) {
      parts.push({ kind: 'text', text: source.slice(index) });
      break;
    }
    if (open > index) parts.push({ kind: 'text', text: source.slice(index, open) });
    const close = source.indexOf('}}', open + 2);
    if (close === -1) return { ok: false, error: { code: 'SPEC_TEMPLATE_SYNTAX', message: `unclosed {{ at character ${open}` } };
    const inner = source.slice(open + 2, close);
    if (inner.trim() === '') return { ok: false, error: { code: 'SPEC_TEMPLATE_SYNTAX', message: `empty {{ }} at character ${open}` } };
    const parsed = parseExpression(inner, roots);
    if (!parsed.ok) return { ok: false, error: { ...parsed.error, message: `in {{ }} at character ${open}: ${parsed.error.message}` } };
    parts.push({ kind: 'hole', source: inner.trim(), ast: parsed.ast, offset: open });
    index = close + 2;
  }
  return { ok: true, parts };
}

/**
 * Compiles a parsed template to a TypeScript string expression. Each hole is wrapped in `textOf`, the name of a
 * function in scope that renders a value as text (undefined and null as an empty string).
 */
export function compileTemplate(parts: readonly TemplatePart[], roots: RootMapping = {}, textOf = 'String'): string {
  if (parts.length === 0) return '""';
  return parts.map((p) => (p.kind === 'text' ? JSON.stringify(p.text) : `${textOf}(${compileExpression(p.ast, roots)})`)).join(' + ');
}
