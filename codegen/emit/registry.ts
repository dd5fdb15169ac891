import { agentToolName, listStates, type FlowSpec } from '@flowing/spec';
import { machineNames, pascalCase, safeIdentifier, toolExportName } from '../names.ts';

/** Where a tool's module lives and what it exports, relative to the machine folder. */
export interface ToolModuleRef {
  /** Import specifier from machines/<id>/, e.g. `../../tools/query_order.js`. */
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
    else if ('llm' in invoke) invoke.tools?.forEach((t) => names.add(agentToolName(t)));
  }
  return [...names].sort();
}

/** Emits `<id>.registry.ts`: the typed map from tool name to its contract. */
export function emitRegistryModule(
  spec: FlowSpec,
  options: { specFile: string; specHash: string; generatorVersion: string; modules: Record<string, ToolModuleRef> },
): string {
  const names = machineNames(spec.id);
  const tools = toolsUsedBy(spec);
  const lines = [
    `// Generated from ${options.specFile} by flowing codegen — do not edit.`,
    `// Change the spec and run \`flowing codegen\`. spec sha256:${options.specHash} generator:flowing@${options.generatorVersion}`,
  ];
  const taken = new Set([names.tools]);
  const locals = new Map<string, string>();
  for (const tool of tools) {
    const ref = options.modules[tool] ?? { specifier: `../../tools/${tool}.js`, exportName: toolExportName(tool) };
    // A tool module may export a name this module cannot bind as is (a reserved word, or the registry's own name).
    let local = safeIdentifier(ref.exportName, 'Tool', taken);
    while (taken.has(local)) local = `${local}_`;
    taken.add(local);
    locals.set(tool, local);
    const imported = local === ref.exportName ? local : `${ref.exportName} as ${local}`;
    lines.push(`import { ${imported} } from ${JSON.stringify(ref.specifier)};`);
  }
  lines.push('');
  lines.push(`/** The tools ${spec.id} may call, by name. */`);
  if (tools.length === 0) {
    lines.push(`export const ${names.tools} = {} as const;`);
  } else {
    lines.push(`export const ${names.tools} = {`);
    for (const tool of tools) lines.push(`  ${tool}: ${locals.get(tool)},`);
    lines.push('} as const;');
  }
  lines.push('');
  lines.push(`export type ${pascalCase(names.tools)} = typeof ${names.tools};`);
  return lines.join('\n') + '\n';
}
