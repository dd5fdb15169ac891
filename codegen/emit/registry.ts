import { listStates, type FlowSpec } from '@flowing/spec';
import { machineNames, toolExportName } from '../names.ts';

/** Where a tool's module lives and what it exports, relative to the machine folder. */
export interface ToolModuleRef {
  /** Import specifier from machines/<id>/, e.g. `../../tools/query_order.ts`. */
  specifier: string;
  exportName: string;
}

/** Every tool a spec uses: invoked tools and tools handed to agents, sorted. */
export function toolsUsedBy(spec: FlowSpec): string[] {
  const names = new Set<string>();
  for (const { spec: state } of listStates(spec)) {
    const invoke = state.invoke;
    if (!invoke) continue;
    if ('tool' in invoke) names.add(invoke.tool);
    else invoke.tools?.forEach((t) => names.add(t));
  }
  return [...names].sort();
}

/** Emits `<id>.registry.ts`: the typed map from tool name to its contract. */
export function emitRegistryModule(spec: FlowSpec, options: { specFile: string; specHash: string; generatorVersion: string; modules: Record<string, ToolModuleRef> }): string {
  const names = machineNames(spec.id);
  const tools = toolsUsedBy(spec);
  const lines = [
    `// Generated from ${options.specFile} by flowing codegen — do not edit.`,
    `// Change the spec and run \`flowing codegen\`. spec sha256:${options.specHash} generator:flowing@${options.generatorVersion}`,
  ];
  for (const tool of tools) {
    const ref = options.modules[tool] ?? { specifier: `../../tools/${tool}.ts`, exportName: toolExportName(tool) };
    lines.push(`import { ${ref.exportName} } from ${JSON.stringify(ref.specifier)};`);
  }
  lines.push('');
  lines.push(`/** The tools ${spec.id} may call, by name. */`);
  if (tools.length === 0) {
    lines.push(`export const ${names.tools} = {} as const;`);
  } else {
    lines.push(`export const ${names.tools} = {`);
    for (const tool of tools) lines.push(`  ${tool}: ${(options.modules[tool]?.exportName) ?? toolExportName(tool)},`);
    lines.push('} as const;');
  }
  lines.push('');
  lines.push(`export type ${names.tools.charAt(0).toUpperCase()}${names.tools.slice(1)} = typeof ${names.tools};`);
  return lines.join('\n') + '\n';
}
