import { defineTool, type AnyTool } from 'flowing/runtime';

/** Wraps tools so every `run` is counted by name (the stand-in for a side-effect ledger). */
export function countingTools(tools: Readonly<Record<string, AnyTool>>) {
  const counts: Record<string, number> = {};
  const wrapped: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    counts[name] = 0;
    wrapped[name] = defineTool({
      ...tool,
      run: (input, context) => {
        counts[name]!++;
        return tool.run(input, context);
      },
    }) as AnyTool;
  }
  return { tools: wrapped, counts };
}
