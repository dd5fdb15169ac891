import { invokedMachine, listStates, type FlowSpec, type MachineCost, type ToolInfo } from '@flowing/spec';
import { create } from 'zustand';
import { api } from '../api.ts';
import type { CostRequest } from './cost.worker.ts';
import CostWorker from './cost.worker.ts?worker';
import { createWorkerClient } from './worker-client.ts';

/**
 * The cost bound of the open machine, worked out in a worker a moment after the spec stops changing (a 300-state
 * machine takes a few hundred milliseconds, which would hold the page), and the specs of the machines it invokes,
 * fetched once each so the bound can follow them.
 */
interface CostState {
  cost: MachineCost | undefined;
  /** Why the bound could not be worked out (`STUDIO_COST_FAILED: …`); the badge says so instead of a bound. */
  failure: string | undefined;
  /** Specs of invoked machines by id; null when the studio has no such machine. */
  machines: Record<string, FlowSpec | null>;
  open: boolean;
  toggle(open?: boolean): void;
}

export const useCost = create<CostState>()((set, get) => ({
  cost: undefined,
  failure: undefined,
  machines: {},
  open: false,
  toggle: (open) => set({ open: open ?? !get().open }),
}));

/** What a machine invoke resolves to: the machines fetched so far (the validator's budget check uses it too). */
export function knownMachine(id: string): FlowSpec | undefined {
  return useCost.getState().machines[id] ?? undefined;
}

const PAUSE_MS = 150;
const COST_TIMEOUT_MS = 30_000;
let timer: ReturnType<typeof setTimeout> | undefined;
/** The newest request: an older answer that arrives later is dropped. */
let latest = 0;
/** What the current bound was worked out from, so that a change of places only (a drag, a layout) costs nothing. */
let basis: { spec: FlowSpec; tools: Record<string, ToolInfo>; machines: CostState['machines'] } | undefined;

const inWorker = createWorkerClient<Omit<CostRequest, 'id'>, MachineCost>({
  start: () => new CostWorker(),
  code: 'STUDIO_COST_FAILED',
  what: 'the cost bound',
  timeoutMs: COST_TIMEOUT_MS,
});

/** True when two specs differ in their places (`layout`) at most: every other top-level value is the same object. */
function samePlacesAside(a: FlowSpec, b: FlowSpec): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('layout');
  for (const key of keys) if ((a as Record<string, unknown>)[key] !== (b as Record<string, unknown>)[key]) return false;
  return true;
}

/** Works the bound out again after a pause; fetches invoked machines it has not seen (and then works it out again). */
export function scheduleCost(spec: FlowSpec | undefined, tools: Record<string, ToolInfo>): void {
  clearTimeout(timer);
  if (!spec) {
    latest++;
    basis = undefined;
    useCost.setState({ cost: undefined, failure: undefined });
    return;
  }
  const known = useCost.getState().machines;
  if (basis && basis.tools === tools && basis.machines === known && samePlacesAside(basis.spec, spec)) return;
  timer = setTimeout(() => {
    const machines = useCost.getState().machines;
    const missing = new Set<string>();
    for (const entry of listStates(spec)) {
      const id = invokedMachine(entry.spec.invoke);
      if (id !== undefined && id !== spec.id && !(id in machines)) missing.add(id);
    }
    const id = ++latest;
    basis = { spec, tools, machines };
    inWorker({ spec, tools: Object.keys(tools).length > 0 ? tools : undefined, machines }).then(
      (cost) => {
        if (id === latest) useCost.setState({ cost, failure: undefined });
      },
      (error: unknown) => {
        if (id !== latest) return;
        basis = undefined;
        const failure = error instanceof Error ? error.message : String(error);
        console.warn(`${failure}; the cost bound is not shown`);
        useCost.setState({ cost: undefined, failure });
      },
    );
    if (missing.size === 0) return;
    useCost.setState({ machines: { ...machines, ...Object.fromEntries([...missing].map((m) => [m, null])) } });
    void Promise.all(
      [...missing].map((m) =>
        api.getMachine(m).then(
          (doc) => [m, doc.spec] as const,
          () => [m, null] as const,
        ),
      ),
    ).then((found) => {
      useCost.setState({ machines: { ...useCost.getState().machines, ...Object.fromEntries(found) } });
      scheduleCost(spec, tools);
    });
  }, PAUSE_MS);
}
