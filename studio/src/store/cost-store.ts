import { computeCost, invokedMachine, listStates, type FlowSpec, type MachineCost, type ToolInfo } from '@flowing/spec';
import { create } from 'zustand';
import { api } from '../api.ts';

/**
 * The cost bound of the open machine, worked out a moment after the spec stops changing (a 300-state machine takes
 * a tenth of a second), and the specs of the machines it invokes, fetched once each so the bound can follow them.
 */
interface CostState {
  cost: MachineCost | undefined;
  /** Specs of invoked machines by id; null when the studio has no such machine. */
  machines: Record<string, FlowSpec | null>;
  open: boolean;
  toggle(open?: boolean): void;
}

export const useCost = create<CostState>()((set, get) => ({
  cost: undefined,
  machines: {},
  open: false,
  toggle: (open) => set({ open: open ?? !get().open }),
}));

/** What a machine invoke resolves to: the machines fetched so far (the validator's budget check uses it too). */
export function knownMachine(id: string): FlowSpec | undefined {
  return useCost.getState().machines[id] ?? undefined;
}

const PAUSE_MS = 150;
let timer: ReturnType<typeof setTimeout> | undefined;

/** Works the bound out again after a pause; fetches invoked machines it has not seen (and then works it out again). */
export function scheduleCost(spec: FlowSpec | undefined, tools: Record<string, ToolInfo>): void {
  clearTimeout(timer);
  if (!spec) {
    useCost.setState({ cost: undefined });
    return;
  }
  timer = setTimeout(() => {
    const known = useCost.getState().machines;
    const missing = new Set<string>();
    for (const entry of listStates(spec)) {
      const id = invokedMachine(entry.spec.invoke);
      if (id !== undefined && id !== spec.id && !(id in known)) missing.add(id);
    }
    const options = {
      tools: Object.keys(tools).length > 0 ? tools : undefined,
      resolveMachine: (id: string) => (id === spec.id ? spec : knownMachine(id)),
    };
    useCost.setState({ cost: computeCost(spec, options) });
    if (missing.size === 0) return;
    useCost.setState({ machines: { ...known, ...Object.fromEntries([...missing].map((id) => [id, null])) } });
    void Promise.all(
      [...missing].map((id) =>
        api.getMachine(id).then(
          (doc) => [id, doc.spec] as const,
          () => [id, null] as const,
        ),
      ),
    ).then((found) => {
      useCost.setState({ machines: { ...useCost.getState().machines, ...Object.fromEntries(found) } });
      scheduleCost(spec, tools);
    });
  }, PAUSE_MS);
}
