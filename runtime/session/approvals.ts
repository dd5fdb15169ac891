import { hash } from 'node:crypto';
import type { AnyMachineSnapshot } from 'xstate';
import { MAX_DECISION_REASON_CHARS } from '../constants.ts';
import type { ApprovalRecord } from '../store/types.ts';
import type { ApprovalSite } from './machine-info.ts';
import { activeNodes } from '../xstate-adapter.ts';

/** JSON with sorted object keys, so equal values hash equally. */
export function stableJson(value: unknown): string {
  // Plain data (every model request and tool argument) is written directly; anything else (toJSON, class instances,
  // array-index keys, which an object literal reorders, cycles) takes the general path, which defines the output.
  const fast = plainJson(value, 0);
  return fast ?? generalStableJson(value);
}

const MAX_PLAIN_DEPTH = 64;

/** What `generalStableJson` writes for plain objects, arrays and primitives; undefined when it cannot say. */
function plainJson(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth > MAX_PLAIN_DEPTH) return undefined;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return undefined;
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const text = item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : plainJson(item, depth + 1);
      if (text === undefined) return undefined;
      out += i === 0 ? text : `,${text}`;
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const keys = sortedKeys(value);
  let out = '{';
  let first = true;
  for (const key of keys) {
    if (isArrayIndex(key)) return undefined;
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    const text = plainJson(item, depth + 1);
    if (text === undefined) return undefined;
    out += `${first ? '' : ','}${quotedKey(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/** Own keys in code-unit order, as `Array.prototype.sort` orders them; an insertion sort for the few keys of a request. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

/** JSON.stringify(key), remembered: requests and arguments use the same few field names over and over. */
function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && String(Number(key) >>> 0) === key && key !== '4294967295';
}

function generalStableJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        return Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        );
      }
      return v;
    }) ?? 'null'
  );
}

/** sha256 of the stable JSON of a tool's arguments. */
export function argsHash(args: unknown): string {
  return hash('sha256', stableJson(args), 'hex');
}

/**
 * The approval a session asks for on entering an approval state: the tool and the exact args it will get, computed by
 * the invoke's own arguments function from the context the state holds.
 */
export function approvalRequest(site: ApprovalSite, context: unknown, id: string): ApprovalRecord {
  const args = site.args(context);
  return { id, state: site.state, tool: site.tool, args, argsHash: argsHash(args) };
}

/** The decided approval when the event is APPROVE / REJECT for the pending request in an active state. */
export function decideApproval(
  approval: ApprovalRecord | undefined,
  event: { type: string; reason?: unknown },
  snapshot: AnyMachineSnapshot,
): ApprovalRecord | undefined {
  if (!approval || approval.decision || (event.type !== 'APPROVE' && event.type !== 'REJECT')) return undefined;
  if (!activeNodes(snapshot).some((node) => node.key === approval.state)) return undefined;
  return decided(approval, event);
}

/** `approval` decided by an APPROVE or REJECT, with the event's reason when it gives one (cut to its limit). */
export function decided(approval: ApprovalRecord, event: { type: string; reason?: unknown }): ApprovalRecord {
  const reason = typeof event.reason === 'string' && event.reason !== '' ? event.reason.slice(0, MAX_DECISION_REASON_CHARS) : undefined;
  return { ...approval, decision: event.type === 'APPROVE' ? 'approved' : 'rejected', ...(reason === undefined ? {} : { reason }) };
}
