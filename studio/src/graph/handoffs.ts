import { parseExpression, type ExprNode, type TransitionObject } from '@flowing/spec';

/**
 * The hand-off targets an agent call declares (`"handoffs": ["billing", "refunds"]`), or undefined when the call has
 * none (or another kind of call, or a list that is not strings: drawn as no hand-offs rather than guessed).
 */
export function handoffTargets(invoke: unknown): string[] | undefined {
  if (!invoke || typeof invoke !== 'object') return undefined;
  const { llm, handoffs } = invoke as { llm?: unknown; handoffs?: unknown };
  if (llm !== 'agent' || !Array.isArray(handoffs) || handoffs.length === 0) return undefined;
  return handoffs.every((h) => typeof h === 'string') ? (handoffs as string[]) : undefined;
}

const isHandoff = (node: ExprNode): boolean =>
  node.kind === 'member' && node.property === 'handoff' && node.object.kind === 'root' && node.object.name === 'output';

/** `output.handoff.to` (the chosen target), or `output.handoff` itself as some specs compare it. */
const isTarget = (node: ExprNode): boolean =>
  isHandoff(node) || (node.kind === 'member' && node.property === 'to' && isHandoff(node.object));

/**
 * Walks a guard: pushes every target name compared with `output.handoff.to` onto `names`; true when it reads
 * `output.handoff` at all (`output.handoff != undefined && output.handoff.to == 'orders'` names 'orders').
 */
function collect(node: ExprNode, names: string[]): boolean {
  switch (node.kind) {
    case 'member':
      return isHandoff(node) || collect(node.object, names);
    case 'binary': {
      if (node.operator === '==' || node.operator === '===') {
        for (const [a, b] of [
          [node.left, node.right],
          [node.right, node.left],
        ] as const)
          if (isTarget(a) && b.kind === 'literal' && typeof b.value === 'string') {
            names.push(b.value);
            return true;
          }
      }
      const left = collect(node.left, names);
      return collect(node.right, names) || left;
    }
    case 'unary':
      return collect(node.argument, names);
    case 'conditional': {
      const reads = [node.test, node.consequent, node.alternate].map((part) => collect(part, names));
      return reads.some(Boolean);
    }
    case 'array':
      return node.elements.map((element) => collect(element, names)).some(Boolean);
    default:
      return false;
  }
}

/**
 * The hand-off an `onDone` branch routes: the target name its guard compares `output.handoff.to` with (`'billing'`
 * for `output.handoff.to == 'billing'`), '' when the guard reads `output.handoff` some other way, undefined for any
 * other branch. Named guards (`{ ref }`) are code the graph cannot read: undefined.
 */
export function handoffOfBranch(transition: TransitionObject): string | undefined {
  const guard = transition.guard;
  if (typeof guard !== 'string' || !guard.includes('handoff')) return undefined;
  const parsed = parseExpression(guard, ['context', 'output']);
  if (!parsed.ok) return undefined;
  const names: string[] = [];
  const reads = collect(parsed.ast, names);
  return names[0] ?? (reads ? '' : undefined);
}
