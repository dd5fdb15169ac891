/**
 * How a `state.changed` event records the context. The first one of a session (and of a fork, and after the session
 * went back to an earlier state) carries it whole as `context`; later ones carry only what changed: `contextPatch`,
 * the top-level fields with a new value, and `contextUnset`, the fields that are gone. A 200 KB message assigned to
 * the context is then logged once, not again at every later step of the turn.
 */

/** The fields of a `state.changed` event's data that say how the context changed (none when it did not). */
export interface ContextChange {
  context?: unknown;
  contextPatch?: Readonly<Record<string, unknown>>;
  contextUnset?: readonly string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The change from `before` to `after` as logged: a patch of the top-level fields whose value is not the same one (by
 * identity: an assign keeps the fields it does not set), the whole context when either is not an object, or
 * undefined when nothing changed.
 */
export function contextChange(before: unknown, after: unknown): ContextChange | undefined {
  if (before === after) return undefined;
  if (!isRecord(before) || !isRecord(after)) return { context: after };
  let patch: Record<string, unknown> | undefined;
  let unset: string[] | undefined;
  for (const key of Object.keys(after)) {
    const value = after[key];
    if (value === undefined) {
      if (before[key] !== undefined) (unset ??= []).push(key);
    } else if (!Object.is(value, before[key])) (patch ??= {})[key] = value;
  }
  for (const key of Object.keys(before)) if (before[key] !== undefined && !Object.hasOwn(after, key)) (unset ??= []).push(key);
  if (!patch && !unset) return undefined;
  return { ...(patch ? { contextPatch: patch } : {}), ...(unset ? { contextUnset: unset } : {}) };
}

/** The context after a `state.changed` event's data, from the one before it (pure: neither is changed). */
export function applyContextChange(before: unknown, data: Readonly<ContextChange>): unknown {
  if ('context' in data) return data.context;
  if (data.contextPatch === undefined && data.contextUnset === undefined) return before;
  const next: Record<string, unknown> = isRecord(before) ? { ...before } : {};
  // defineProperty, not assignment: a `__proto__` key in a hostile log must stay a plain field.
  if (isRecord(data.contextPatch))
    for (const [key, value] of Object.entries(data.contextPatch))
      Object.defineProperty(next, key, { value, enumerable: true, writable: true, configurable: true });
  if (Array.isArray(data.contextUnset)) for (const key of data.contextUnset) delete next[String(key)];
  return next;
}

/** True when the event data records a change of the context (whole or patched). */
export function changesContext(data: Readonly<Record<string, unknown>>): boolean {
  return 'context' in data || 'contextPatch' in data || 'contextUnset' in data;
}
