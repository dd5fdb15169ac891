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

/** The hand-off a guard tests for: the name compared with `output.handoff.to`, '' when it reads the handoff otherwise; else undefined. */
function handoffIn(node: ExprNode): string | undefined {
  switch (node.kind) {
    case 'member':
      return isHandoff(node) ? '' : handoffIn(node.object);
    case 'binary': {
      if (node.operator === '==' || node.operator === '===') {
        for (const [a, b] of [
          [node.left, node.right],
          [node.right, node.left],
        ] as const)
          if (isTarget(a) && b.kind === 'literal' && typeof b.value === 'string') return b.value;
      }
      return handoffIn(node.left) ?? handoffIn(node.right);
    }
    case 'unary':
      return handoffIn(node.argument);
    case 'conditional':
      return handoffIn(node.test) ?? handoffIn(node.consequent) ?? handoffIn(node.alternate);
    case 'array':
      for (const element of node.elements) {
        const found = handoffIn(element);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return undefined;
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
  return parsed.ok ? handoffIn(parsed.ast) : undefined;
}
