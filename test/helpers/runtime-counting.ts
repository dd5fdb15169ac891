import { defineTool, type AnyTool } from '@flowing/runtime';

/**
 * Wraps tools so every `run` is counted by name (the stand-in for a side-effect ledger). With `delayMs`, each run
 * first waits that long on a real timer, like a tool doing I/O, so the runtime commits while it is in flight.
 */
export function countingTools(tools: Readonly<Record<string, AnyTool>>, options: { delayMs?: number } = {}) {
  const counts: Record<string, number> = {};
  const wrapped: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    counts[name] = 0;
    wrapped[name] = defineTool({
      ...tool,
      run: async (input, context) => {
        counts[name]!++;
        if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        return tool.run(input, context);
      },
    }) as AnyTool;
  }
  return { tools: wrapped, counts };
}
