import { parseExpression, parseTemplate, type ExprNode, type ExpressionRoot } from '@flowing/spec';
import type { Doc } from './doc.ts';
import { stringDoc, stringLiteral } from './literal.ts';

/** Where an expression sits decides which roots it may read: an event's payload, a call's output or its error. */
export type ExpressionSite = 'event' | 'done' | 'error' | 'context';

const ROOTS: Record<ExpressionSite, ExpressionRoot[]> = {
  event: ['context', 'event'],
  done: ['context', 'output'],
  error: ['context', 'error'],
  context: ['context'],
};

/** The root besides `context` a site provides (the parameter a named guard or action receives), if any. */
export const SITE_PARAMETER: Record<ExpressionSite, ExpressionRoot | undefined> = {
  event: 'event',
  done: 'output',
  error: 'error',
  context: undefined,
};

/** A runtime function generated code calls for an expression (`append(...)` becomes `appendMessage(...)`). */
export type ExpressionHelper = 'appendMessage';

/** A compiled expression and the roots it reads; `doc` breaks a long `+` chain over several lines. */
export interface CompiledExpression {
  source: string;
  doc: Doc;
  reads: Set<ExpressionRoot>;
  /** The runtime functions it calls, for the module's imports. */
  helpers: Set<ExpressionHelper>;
}

/** Compiles an already validated expression; throws on invalid input (validation runs before emission). */
export function compileAt(text: string, site: ExpressionSite): CompiledExpression {
  const parsed = parseExpression(text, ROOTS[site]);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  const reads = new Set<ExpressionRoot>();
  const helpers = new Set<ExpressionHelper>();
  const source = print(parsed.ast, reads, helpers);
  const operands = plusOperands(parsed.ast, reads, helpers);
  // The chain is the same text cut at its top-level `+`; anything else would be a bug, so fall back to one line.
  const chain = operands.length > 1 && operands.join(' + ') === source;
  return { source, doc: chain ? { kind: 'chain', operator: '+', operands } : source, reads, helpers };
}

/** The operands of a left-nested `a + b + c` as printed inside it (with the parentheses each needs). */
function plusOperands(node: ExprNode, reads: Set<ExpressionRoot>, helpers: Set<ExpressionHelper>): string[] {
  if (node.kind !== 'binary' || node.operator !== '+') return [print(node, reads, helpers)];
  const own = PRECEDENCE['+']!;
  const p = (child: ExprNode) => print(child, reads, helpers);
  const left =
    node.left.kind === 'binary' && node.left.operator === '+'
      ? plusOperands(node.left, reads, helpers)
      : [precedence(node.left) < own ? `(${p(node.left)})` : p(node.left)];
  return [...left, precedence(node.right) <= own ? `(${p(node.right)})` : p(node.right)];
}

/**
 * A prompt template as a `+` chain of its text pieces and `asText(hole)` calls; `onHole` is told of each call and of
 * the runtime functions the hole calls.
 */
export function templateDoc(source: string, reads: Set<ExpressionRoot>, onHole: (helpers: Set<ExpressionHelper>) => void): Doc {
  const parsed = parseTemplate(source, ['context']);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  const operands: Doc[] = [];
  for (const part of parsed.parts) {
    if (part.kind === 'hole') {
      const helpers = new Set<ExpressionHelper>();
      operands.push(`asText(${print(part.ast, reads, helpers)})`);
      onHole(helpers);
    } else {
      const text = stringDoc(part.text);
      if (typeof text === 'string') operands.push(text);
      else if (text.kind === 'chain') operands.push(...text.operands);
    }
  }
  if (operands.length === 0) return '""';
  return operands.length === 1 ? operands[0]! : { kind: 'chain', operator: '+', operands };
}

// Binding strength of each operator; `??` may not be mixed with `||` or `&&` without parentheses.
const PRECEDENCE: Record<string, number> = {
  '??': 1,
  '||': 1,
  '&&': 2,
  '==': 3,
  '!=': 3,
  '===': 3,
  '!==': 3,
  '<': 4,
  '<=': 4,
  '>': 4,
  '>=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};
const UNARY = 7;
const PRIMARY = 8;

function precedence(node: ExprNode): number {
  if (node.kind === 'conditional') return 0;
  if (node.kind === 'unary') return UNARY;
  if (node.kind === 'binary' && node.operator !== 'in') return PRECEDENCE[node.operator]!;
  return PRIMARY;
}

function mixesNullish(operator: string, child: ExprNode): boolean {
  if (child.kind !== 'binary') return false;
  const logical = (op: string) => op === '||' || op === '&&';
  return (operator === '??' && logical(child.operator)) || (logical(operator) && child.operator === '??');
}

/**
 * The expression as TypeScript with the semantics of the spec's compileExpression (strict equality, optional
 * chaining below a root, `in` as includes), but only the parentheses precedence needs, so it reads as written.
 */
function print(node: ExprNode, reads: Set<ExpressionRoot>, helpers: Set<ExpressionHelper>): string {
  const p = (child: ExprNode) => print(child, reads, helpers);
  const wrap = (child: ExprNode, needed: boolean) => (needed ? `(${p(child)})` : p(child));
  switch (node.kind) {
    case 'literal':
      return node.value === null ? 'undefined' : typeof node.value === 'string' ? stringLiteral(node.value) : JSON.stringify(node.value);
    case 'root':
      reads.add(node.name);
      return node.name;
    case 'member': {
      const object = p(node.object);
      const access = typeof node.property === 'number' ? `[${node.property}]` : `.${node.property}`;
      return node.object.kind === 'root' ? `${object}${access}` : `${object}?${typeof node.property === 'number' ? '.' : ''}${access}`;
    }
    case 'array':
      return `[${node.elements.map(p).join(', ')}]`;
    case 'unary':
      // `-(-x)` must not print as the decrement `--x`.
      return `${node.operator}${wrap(node.argument, precedence(node.argument) < PRIMARY && !(node.operator === '!' && node.argument.kind === 'unary' && node.argument.operator === '!'))}`;
    case 'binary': {
      if (node.operator === 'in') return `(${p(node.right)} as readonly unknown[]).includes(${p(node.left)})`;
      const own = PRECEDENCE[node.operator]!;
      const left = wrap(node.left, precedence(node.left) < own || mixesNullish(node.operator, node.left));
      const right = wrap(node.right, precedence(node.right) <= own || mixesNullish(node.operator, node.right));
      const op = node.operator === '==' ? '===' : node.operator === '!=' ? '!==' : node.operator;
      return `${left} ${op} ${right}`;
    }
    case 'conditional':
      return `${wrap(node.test, node.test.kind === 'conditional')} ? ${p(node.consequent)} : ${p(node.alternate)}`;
    case 'append':
      // A runtime function, not an inline spread: a text of the wrong type is then a type error at its argument.
      helpers.add('appendMessage');
      return `appendMessage(${p(node.list)}, ${p(node.content)})`;
  }
}

/**
 * The TypeScript the generator writes for an expression at a site (roots spelled as the parameters of the named
 * guard or action that holds it). Exported for tests and tools that show generated code next to the spec.
 */
export function printExpression(text: string, site: ExpressionSite): string {
  return compileAt(text, site).source;
}
