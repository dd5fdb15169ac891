import { hash } from 'node:crypto';
import type { AnyMachineSnapshot } from 'xstate';
import { formatIssues } from '../errors.ts';
import { activeNodes } from '../xstate-adapter.ts';
import type { SessionStatus } from '../store/types.ts';
import type { MachineInfo } from './machine-info.ts';

/** Why `send` did not apply an event. */
export interface Refusal {
  code: string;
  message: string;
  details?: unknown;
}

export type EventCheck = { ok: true; event: { type: string } & Record<string, unknown> } | { ok: false; refusal: Refusal };

/** Refusal for a session that no longer takes events, or undefined when it does. */
export function checkStatus(status: SessionStatus, error?: { code: string }): Refusal | undefined {
  switch (status) {
    case 'done':
      return { code: 'SESSION_FINISHED', message: 'the session reached a final state and takes no more events' };
    case 'error':
      return {
        code: 'SESSION_FINISHED',
        message: `the session ended with an error (${error?.code ?? 'unknown'}) and takes no more events`,
      };
    case 'cancelled':
      return { code: 'SESSION_CANCELLED', message: 'the session was cancelled and takes no more events' };
    case 'needs_attention':
      return {
        code: 'SESSION_NEEDS_ATTENTION',
        message: `the session waits for a person (${error?.code ?? 'unknown'}); it takes no events until the call is resolved or the session cancelled`,
      };
    default:
      return undefined;
  }
}

/** Checks the event's type and payload against the spec's declared events. */
export function checkEvent(info: MachineInfo, event: unknown): EventCheck {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    return { ok: false, refusal: { code: 'INVALID_PAYLOAD', message: 'an event must be an object with a string `type`' } };
  }
  const type = (event as { type?: unknown }).type;
  if (typeof type !== 'string') return { ok: false, refusal: { code: 'INVALID_PAYLOAD', message: 'an event must have a string `type`' } };
  const schema = info.eventSchemas.get(type);
  if (!schema) {
    const known = [...info.eventSchemas.keys()].join(', ');
    return {
      ok: false,
      refusal: {
        code: 'UNKNOWN_EVENT',
        message: `machine '${info.definition.id}' declares no event '${truncate(type)}' (it declares: ${known})`,
      },
    };
  }
  const parsed = schema.safeParse(event);
  if (!parsed.success) {
    return {
      ok: false,
      refusal: {
        code: 'INVALID_PAYLOAD',
        message: `payload of ${type} does not match its schema: ${formatIssues(parsed.error.issues)}`,
        details: { issues: parsed.error.issues },
      },
    };
  }
  return { ok: true, event: parsed.data as { type: string } & Record<string, unknown> };
}

/**
 * Why an event that took no transition was not applied: some active state handles its type (so every guard was
 * false) or none does. XState itself would drop it silently.
 */
export function untakenReason(snapshot: AnyMachineSnapshot, type: string): Refusal {
  const handled = activeNodes(snapshot).some((node) => node.transitions.has(type) || node.transitions.has('*'));
  const states = activeStates(snapshot).join(', ');
  return handled
    ? { code: 'GUARD_REJECTED', message: `${type} is handled in ${states}, but every guard was false` }
    : { code: 'NO_TRANSITION', message: `no active state (${states}) handles ${type}` };
}

/** Dotted paths of the active leaf states (`active.idle`). */
export function activeStates(snapshot: AnyMachineSnapshot): string[] {
  return activeNodes(snapshot)
    .filter((node) => node.type === 'atomic' || node.type === 'final')
    .map((node) => node.path.join('.'));
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** Characters of a refused event's JSON kept in its log record when the event is larger than that. */
export const REFUSED_PAYLOAD_PREVIEW_CHARS = 512;

/**
 * The data of the `transition.rejected` event that records a refused event (its type cut to 200 characters). A
 * payload of up to REFUSED_PAYLOAD_PREVIEW_CHARS characters of JSON is kept whole (replay sends it again); a larger
 * one only as a preview, its sha256 and its size, so refused events cannot fill a log with their bodies.
 */
export function refusalData(raw: unknown, refusal: Refusal, states: readonly string[], payload?: unknown): Record<string, unknown> {
  const type =
    raw !== null && typeof raw === 'object' && typeof (raw as { type?: unknown }).type === 'string' ? (raw as { type: string }).type : null;
  return {
    event: type === null ? null : type.slice(0, 200),
    states,
    code: refusal.code,
    reason: refusal.message,
    ...(refusal.details === undefined ? {} : { details: refusal.details }),
    ...(payload === undefined ? {} : keptPayload(payload)),
  };
}

function keptPayload(payload: unknown): Record<string, unknown> {
  const json = JSON.stringify(payload);
  if (json.length <= REFUSED_PAYLOAD_PREVIEW_CHARS) return { payload };
  return {
    payloadPreview: json.slice(0, REFUSED_PAYLOAD_PREVIEW_CHARS),
    payloadSha256: hash('sha256', json, 'hex'),
    payloadBytes: Buffer.byteLength(json),
  };
}
