import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { formatSpec, listStates, machineInvokes, type FlowSpec } from '@flowing/spec';
import { emitMachineModule, type ChildModuleRef } from './emit/machine.ts';
import { emitRegistryModule, toolsUsedBy, type ToolModuleRef } from './emit/registry.ts';
import type { SourceRegion } from './emit/writer.ts';
import { importSpecifier, machineNames, toolExportName } from './names.ts';
import type { ToolCatalog } from './tool-catalog.ts';
import { GENERATOR_VERSION } from './version.ts';

export interface GeneratedFile {
  /** Path relative to the project root, with forward slashes. */
  path: string;
  text: string;
  /** Spans of `text` and the spec pointers they came from. */
  regions: SourceRegion[];
}

/** The hash that ties generated code to its spec: canonical JSON without layout and `$schema`. */
export function specHash(spec: FlowSpec): string {
  const { layout: _layout, $schema: _schema, ...semantic } = spec;
  return createHash('sha256').update(formatSpec(semantic)).digest('hex');
}

/**
 * Generates the machine and registry modules of a validated spec. Pure: no file system; the same spec and tool
 * catalog always give byte-identical text.
 * @example generate(spec, { tools: await loadToolCatalog(root) })
 */
export function generate(
  spec: FlowSpec,
  options: { tools?: ToolCatalog; machineDir?: string; machines?: Readonly<Record<string, FlowSpec>> } = {},
): GeneratedFile[] {
  const names = machineNames(spec.id);
  const dir = options.machineDir ?? `machines/${spec.id}`;
  const hash = specHash(spec);
  const common = { specFile: names.specFile, specHash: hash, generatorVersion: GENERATOR_VERSION };
  // Invoked machines live beside this one (`machines/<id>/`); their modules are imported for their types only.
  const children: Record<string, ChildModuleRef> = {};
  for (const { invoke } of machineInvokes(listStates(spec))) {
    const child = machineNames(invoke.machine);
    const specifier = importSpecifier(posix.relative(dir, posix.join(posix.dirname(dir), invoke.machine, child.machineFile)));
    const known = options.machines && Object.hasOwn(options.machines, invoke.machine) ? options.machines[invoke.machine] : undefined;
    children[invoke.machine] = {
      specifier: specifier.startsWith('.') ? specifier : `./${specifier}`,
      hasOutput: known ? known.output !== undefined : true,
    };
  }
  const modules: Record<string, ToolModuleRef> = {};
  for (const tool of toolsUsedBy(spec)) {
    const entry = options.tools?.[tool];
    const file = entry?.file ?? `tools/${tool}.ts`;
    const specifier = importSpecifier(posix.relative(dir, file));
    modules[tool] = {
      specifier: specifier.startsWith('.') ? specifier : `./${specifier}`,
      exportName: entry?.exportName ?? toolExportName(tool),
    };
  }
  const machine = emitMachineModule(spec, { ...common, children });
  return [
    { path: `${dir}/${names.machineFile}`, text: machine.text, regions: machine.regions },
    { path: `${dir}/${names.registryFile}`, text: emitRegistryModule(spec, { ...common, modules }), regions: [] },
  ];
}
