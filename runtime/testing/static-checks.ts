import {
  evaluateExpression,
  listStates,
  parseExpression,
  transitionSites,
  validateSpec,
  type ExprNode,
  type FlowSpec,
} from '@flowing/spec';
import type { TestingErrorCode } from './errors.ts';

/** One static finding about a machine's spec (a warning: it does not fail `flowing test`). */
export interface Finding {
  code: Extract<TestingErrorCode, `STATIC_${string}` | 'PATH_NO_EXAMPLE' | 'PATH_LIMIT'>;
  /** JSON pointer into the spec, or the tool name for PATH_NO_EXAMPLE. */
  where: string;
  message: string;
}

/**
 * Findings that need no run: unreachable states and dead ends (the spec validator's graph checks), declared events
 * that no state accepts, and guards that read nothing that can change (constant), with the value they always have.
 */
export function staticFindings(spec: FlowSpec): Finding[] {
  const findings: Finding[] = [];
  for (const p of validateSpec(spec).problems) {
    if (p.code === 'SPEC_UNREACHABLE_STATE') findings.push({ code: 'STATIC_UNREACHABLE_STATE', where: p.path, message: p.message });
    if (p.code === 'SPEC_DEAD_END') findings.push({ code: 'STATIC_DEAD_END', where: p.path, message: p.message });
  }
  const accepted = new Set<string>();
  const states = listStates(spec);
  for (const entry of states) for (const event of Object.keys(entry.spec.on ?? {})) accepted.add(event);
  for (const event of Object.keys(spec.events)) {
    if (!accepted.has(event))
      findings.push({
        code: 'STATIC_UNUSED_EVENT',
        where: `/events/${escapePointer(event)}`,
        message: `event '${event}' is declared but no state accepts it`,
      });
  }
  for (const entry of states) {
    for (const site of transitionSites(entry.spec)) {
      for (const { transition, pointer } of site.transitions) {
        if (typeof transition.guard !== 'string') continue;
        const parsed = parseExpression(transition.guard, ['context', 'event', 'output', 'error']);
        if (!parsed.ok || readsRoot(parsed.ast)) continue;
        let value: unknown;
        try {
          value = Boolean(evaluateExpression(parsed.ast, {}));
        } catch {
          continue;
        }
        const where = '/' + [...entry.pointer, ...pointer, 'guard'].map(escapePointer).join('/');
        findings.push({
          code: 'STATIC_CONSTANT_GUARD',
          where,
          message: `the guard ${JSON.stringify(transition.guard)} of state '${entry.name}' reads no context, event, output or error: it is always ${value}`,
        });
      }
    }
  }
  return findings;
}

function readsRoot(node: ExprNode): boolean {
  switch (node.kind) {
    case 'root':
      return true;
    case 'literal':
      return false;
    case 'member':
      return readsRoot(node.object);
    case 'array':
      return node.elements.some(readsRoot);
    case 'unary':
      return readsRoot(node.argument);
    case 'binary':
      return readsRoot(node.left) || readsRoot(node.right);
    case 'conditional':
      return readsRoot(node.test) || readsRoot(node.consequent) || readsRoot(node.alternate);
    case 'append':
      return readsRoot(node.list) || readsRoot(node.content);
  }
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
