import { computeCost, type FlowSpec, type ToolInfo } from '@flowing/spec';

/** A cost request: the spec, the tools it may call and the specs of the machines it invokes (null: no such machine). */
export interface CostRequest {
  id: number;
  spec: FlowSpec;
  tools: Record<string, ToolInfo> | undefined;
  machines: Record<string, FlowSpec | null>;
}

// The bound of a 300-state machine takes a few hundred milliseconds to work out: here it never holds the page.
self.onmessage = (message: MessageEvent<CostRequest>) => {
  const { id, spec, tools, machines } = message.data;
  try {
    const cost = computeCost(spec, { tools, resolveMachine: (machine) => (machine === spec.id ? spec : (machines[machine] ?? undefined)) });
    self.postMessage({ id, result: cost });
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
