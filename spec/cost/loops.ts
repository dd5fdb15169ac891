import { parseExpression, type ExprNode } from '../expression.ts';
import type { FlowSpec } from '../schema.ts';
import { listStates, transitionSites } from '../walk.ts';
import type { CostEdge } from './graph.ts';

/** Strongly connected components (Tarjan), each in discovery order; components come out sinks first. */
export function components(nodes: readonly string[], edges: readonly CostEdge[]): string[][] {
  const out = new Map<string, string[]>();
  for (const node of nodes) out.set(node, []);
  for (const edge of edges) out.get(edge.from)?.push(edge.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const result: string[][] = [];
  let counter = 0;
  // Iterative, so a long chain of states cannot overflow the call stack.
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = out.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!out.has(target)) continue;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        result.push(component.reverse());
      }
    }
  }
  return result;
}

export function hasCycle(nodes: readonly string[], edges: readonly CostEdge[]): boolean {
  if (edges.some((edge) => edge.from === edge.to)) return true;
  return components(nodes, edges).some((component) => component.length > 1);
}

/** How many times a loop's edges may be taken, or why nothing bounds it. */
export type LoopBound = { ok: true; passes: number; counter: string } | { ok: false; reason: string };

interface CounterGuard {
  field: string;
  limit: number;
  inclusive: boolean;
}

function contextField(node: ExprNode): string | undefined {
  return node.kind === 'member' && node.object.kind === 'root' && node.object.name === 'context' && typeof node.property === 'string'
    ? node.property
    : undefined;
}

function numberLiteral(node: ExprNode): number | undefined {
  if (node.kind === 'literal' && typeof node.value === 'number') return node.value;
  if (node.kind === 'unary' && node.operator === '-' && node.argument.kind === 'literal' && typeof node.argument.value === 'number')
    return -node.argument.value;
  return undefined;
}

/** The `context.x < N` comparisons a guard requires (in a top-level `&&` chain). */
function counterGuards(guard: unknown): CounterGuard[] {
  if (typeof guard !== 'string') return [];
  const parsed = parseExpression(guard, ['context', 'event', 'output', 'error']);
  if (!parsed.ok) return [];
  const found: CounterGuard[] = [];
  const visit = (node: ExprNode) => {
    if (node.kind !== 'binary') return;
    if (node.operator === '&&') {
      visit(node.left);
      visit(node.right);
      return;
    }
    const flipped: Record<string, string> = { '>': '<', '>=': '<=' };
    const [op, field, limit] =
      node.operator === '<' || node.operator === '<='
        ? [node.operator, contextField(node.left), numberLiteral(node.right)]
        : node.operator in flipped
          ? [flipped[node.operator]!, contextField(node.right), numberLiteral(node.left)]
          : [undefined, undefined, undefined];
    if (op && field !== undefined && limit !== undefined) found.push({ field, limit, inclusive: op === '<=' });
  };
  visit(parsed.ast);
  return found;
}

type Write = { kind: 'increment'; by: number } | { kind: 'literal'; value: number } | { kind: 'other' };

function writeOf(field: string, source: string): Write {
  const parsed = parseExpression(source, ['context', 'event', 'output', 'error']);
  if (!parsed.ok) return { kind: 'other' };
  const ast = parsed.ast;
  const literal = numberLiteral(ast);
  if (literal !== undefined) return { kind: 'literal', value: literal };
  if (ast.kind === 'binary' && ast.operator === '+') {
    const by =
      contextField(ast.left) === field ? numberLiteral(ast.right) : contextField(ast.right) === field ? numberLiteral(ast.left) : undefined;
    if (by !== undefined && by > 0) return { kind: 'increment', by };
  }
  if (ast.kind === 'binary' && ast.operator === '-' && contextField(ast.left) === field) {
    const by = numberLiteral(ast.right);
    if (by !== undefined && by < 0) return { kind: 'increment', by: -by };
  }
  return { kind: 'other' };
}

function writesOf(edge: CostEdge, field: string): Write[] {
  return edge.assigns.filter((assign) => Object.hasOwn(assign, field)).map((assign) => writeOf(field, assign[field]!));
}

/**
 * Bounds a loop (a component of `auto` edges) by a counter the checker can read: every cycle passes an edge guarded
 * by `context.x < N` and an edge that adds a positive constant to `x`, nothing else in the loop writes `x`, no named
 * action runs in it, and `x` starts from a known number. Between two passes of one guarded edge the loop went round,
 * so `x` grew: each guarded edge passes at most ceil((N - start) / step) times.
 */
export function loopBound(
  spec: FlowSpec,
  members: readonly string[],
  inner: readonly CostEdge[],
  entering: readonly CostEdge[],
  startsHere: boolean,
): LoopBound {
  if (inner.some((edge) => edge.namedActions))
    return { ok: false, reason: 'a named action runs in the loop, and it may write any context field' };
  const fields = new Set(inner.flatMap((edge) => counterGuards(edge.transition.guard).map((guard) => guard.field)));
  if (fields.size === 0) return { ok: false, reason: 'no guard in the loop compares a context counter with a number (context.x < N)' };
  let reason = '';
  for (const field of fields) {
    const guarded = inner.filter((edge) => counterGuards(edge.transition.guard).some((guard) => guard.field === field));
    const writes = inner.flatMap((edge) => writesOf(edge, field));
    if (writes.some((write) => write.kind !== 'increment')) {
      reason = `the loop sets context.${field} to something other than context.${field} plus a positive number`;
      continue;
    }
    const incrementing = inner.filter((edge) => writesOf(edge, field).length > 0);
    if (
      hasCycle(
        members,
        inner.filter((edge) => !guarded.includes(edge)),
      )
    ) {
      reason = `the loop can go round without passing a guard on context.${field}`;
      continue;
    }
    if (
      hasCycle(
        members,
        inner.filter((edge) => !incrementing.includes(edge)),
      )
    ) {
      reason = `the loop can go round without adding to context.${field}`;
      continue;
    }
    const start = startValue(spec, field, entering, startsHere);
    if (start === undefined) {
      reason = `the value context.${field} enters the loop with is not known (set it to a number on the way in, or give it a default)`;
      continue;
    }
    const step = Math.min(...inner.flatMap((edge) => writesOf(edge, field)).map((write) => (write as { by: number }).by));
    let passes = 0;
    for (const edge of guarded) {
      const guard = counterGuards(edge.transition.guard).filter((g) => g.field === field);
      const limit = Math.min(...guard.map((g) => g.limit + (g.inclusive ? step : 0)));
      passes += Math.max(0, Math.ceil((limit - start) / step));
    }
    return { ok: true, passes, counter: field };
  }
  return { ok: false, reason };
}

/**
 * The smallest value a counter can have when the loop starts: the numbers every entering edge sets it to, or else
 * the default when everything in the machine only sets it to numbers or adds to it. (A session's input, or a parent's
 * input mapping, may start it elsewhere: the bound assumes they do not go below this.)
 */
function startValue(spec: FlowSpec, field: string, entering: readonly CostEdge[], startsHere: boolean): number | undefined {
  const resets = entering.map((edge) => writesOf(edge, field).at(-1));
  if (!startsHere && entering.length > 0 && resets.every((write) => write?.kind === 'literal'))
    return Math.min(...resets.map((write) => (write as { value: number }).value));
  const fallback = spec.context[field]?.default;
  if (typeof fallback !== 'number') return undefined;
  let least = fallback;
  for (const entry of listStates(spec)) {
    const blocks = [entry.spec.entry?.assign, entry.spec.exit?.assign];
    for (const site of transitionSites(entry.spec)) for (const { transition } of site.transitions) blocks.push(transition.assign);
    for (const block of blocks) {
      if (!block || !Object.hasOwn(block, field)) continue;
      const write = writeOf(field, block[field]!);
      if (write.kind === 'other') return undefined;
      if (write.kind === 'literal') least = Math.min(least, write.value);
    }
  }
  return least;
}
