import { createHash } from 'node:crypto';
import type { AnyMachineSnapshot } from 'xstate';
import { evaluateExpression } from '@flowing/spec';
import type { ApprovalRecord } from '../store/types.ts';
import type { ApprovalSite } from './machine-info.ts';

/** JSON with sorted object keys, so equal values hash equally. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]]));
    }
    return v;
  }) ?? 'null';
}

/** sha256 of the stable JSON of a tool's arguments. */
export function argsHash(args: unknown): string {
  return createHash('sha256').update(stableJson(args)).digest('hex');
}

/** The approval a session asks for on entering an approval state: the tool and the exact args it will get. */
export function approvalRequest(site: ApprovalSite, context: unknown, id: string): ApprovalRecord {
  const args: Record<string, unknown> = {};
  for (const [field, ast] of Object.entries(site.input)) args[field] = evaluateExpression(ast, { context, event: {} });
  return { id, state: site.state, tool: site.tool, args, argsHash: argsHash(args) };
}

/** The decided approval when the event is APPROVE / REJECT for the pending request in an active state. */
export function decideApproval(approval: ApprovalRecord | undefined, event: { type: string }, snapshot: AnyMachineSnapshot): ApprovalRecord | undefined {
  if (!approval || approval.decision || (event.type !== 'APPROVE' && event.type !== 'REJECT')) return undefined;
  if (!snapshot._nodes.some((node) => node.key === approval.state)) return undefined;
  return { ...approval, decision: event.type === 'APPROVE' ? 'approved' : 'rejected' };
}
