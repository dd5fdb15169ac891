import { generatedIdentifier, isReservedWord } from '@flowing/spec';

/** Names derived from a machine id and from tool names, shared by every emitter. */
export function camelCase(id: string): string {
  return generatedIdentifier(id);
}

export function pascalCase(id: string): string {
  const camel = camelCase(id);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** `USER_MESSAGE` -> `UserMessage`: an event name as a part of a camelCase identifier. */
export function eventWord(event: string): string {
  return event
    .toLowerCase()
    .split(/_+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** Globals a generated binding must not shadow, beyond the spec's reserved words. */
const SHADOWED_GLOBALS: ReadonlySet<string> = new Set(['NaN', 'Infinity', 'globalThis']);

/**
 * Module-level names every generated machine module may declare or import; a name derived from the spec that equals
 * one of them gets a suffix instead.
 */
export const MODULE_NAMES: ReadonlySet<string> = new Set([
  'assign',
  'setup',
  'InputFrom',
  'OutputFrom',
  'asText',
  'defineMachine',
  'fromLlm',
  'fromTool',
  'fromMachine',
  'toFlowError',
  'FlowError',
  'actors',
  'Input',
  'Output',
  'EventOf',
  'toolArgs',
]);

/** `name` when it can be declared in a generated module, else `name` + `suffix` (e.g. `class` -> `classTool`). */
export function safeIdentifier(name: string, suffix: string, taken: ReadonlySet<string> = MODULE_NAMES): string {
  return isReservedWord(name) || SHADOWED_GLOBALS.has(name) || taken.has(name) ? `${name}${suffix}` : name;
}

export interface MachineNames {
  id: string;
  machine: string;
  definition: string;
  context: string;
  event: string;
  input: string;
  output: string;
  tools: string;
  guards: string;
  actions: string;
  specFile: string;
  machineFile: string;
  registryFile: string;
  implFile: string;
}

export function machineNames(id: string): MachineNames {
  const camel = camelCase(id);
  const pascal = pascalCase(id);
  return {
    id,
    machine: `${camel}Machine`,
    definition: safeIdentifier(camel, 'Definition'),
    context: `${pascal}Context`,
    event: `${pascal}Event`,
    input: `${pascal}Input`,
    output: `${pascal}Output`,
    tools: `${camel}Tools`,
    guards: `${camel}Guards`,
    actions: `${camel}Actions`,
    specFile: `${id}.flow.json`,
    machineFile: `${id}.machine.ts`,
    registryFile: `${id}.registry.ts`,
    implFile: `${id}.impl.ts`,
  };
}

/** The specifier a generated module imports a sibling module by: `.js`, which TypeScript maps to the `.ts` source. */
export function importSpecifier(tsPath: string): string {
  return tsPath.replace(/\.ts$/, '.js');
}

/** The conventional export name of a tool module (`query_order` -> `queryOrder`, `class` -> `classTool`). */
export function toolExportName(tool: string): string {
  return safeIdentifier(camelCase(tool), 'Tool', new Set());
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An object key as source: bare when it is an identifier, else a JSON string; `__proto__` is always computed. */
export function propertyKey(key: string): string {
  if (key === '__proto__') return '["__proto__"]';
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

/** `object.key` when the key is an identifier, else `object["key"]`. */
export function memberAccess(object: string, key: string): string {
  return IDENTIFIER.test(key) && key !== '__proto__' ? `${object}.${key}` : `${object}[${JSON.stringify(key)}]`;
}
