import type { MachineInfo } from './machine-info.ts';

/**
 * XState builds persisted snapshots with a rest spread, which V8 keeps as a slow dictionary object (about 1 KB);
 * the same data as a plain literal is a third of that, which matters for thousands of idle sessions in memory.
 */
export function compactSnapshot(persisted: Record<string, unknown>, info: MachineInfo): Record<string, unknown> {
  const { status, value, historyValue, context, children, output, error, ...rest } = persisted;
  const compact: Record<string, unknown> = {
    status,
    value: sharedValue(info, value),
    historyValue: orEmpty(historyValue),
    context,
    children: orEmpty(children),
  };
  if (output !== undefined) compact.output = output;
  if (error !== undefined) compact.error = error;
  return Object.keys(rest).length === 0 ? compact : { ...compact, ...rest };
}

/** Shared by every stored snapshot and event that has nothing there (XState only reads them when restoring). */
export const EMPTY_OBJECT: Readonly<Record<string, never>> = Object.freeze({});
export const EMPTY_LIST: readonly never[] = Object.freeze([]);
export const NO_USAGE = Object.freeze({ promptTokens: 0, completionTokens: 0 });

function orEmpty(value: unknown): unknown {
  return value !== null && typeof value === 'object' && Object.keys(value).length === 0 ? EMPTY_OBJECT : value;
}

const MAX_SHARED_VALUES = 1024;

/**
 * One frozen object per distinct state value of a machine ({ active: 'idle' }), shared by the snapshots and events
 * of all its sessions instead of a copy each; string values are shared by V8 already.
 */
export function sharedValue(info: MachineInfo, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const key = JSON.stringify(value);
  const known = info.stateValues.get(key);
  if (known) return known;
  if (info.stateValues.size >= MAX_SHARED_VALUES) return value;
  const frozen = deepFreeze(value);
  info.stateValues.set(key, frozen);
  return frozen;
}

function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
