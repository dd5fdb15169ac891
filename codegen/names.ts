/** Names derived from a machine id and from tool names, shared by every emitter. */
export function camelCase(id: string): string {
  return id.replace(/[-_]+([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function pascalCase(id: string): string {
  const camel = camelCase(id);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

export interface MachineNames {
  id: string;
  machine: string;
  definition: string;
  context: string;
  event: string;
  input: string;
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
    definition: camel,
    context: `${pascal}Context`,
    event: `${pascal}Event`,
    input: `${pascal}Input`,
    tools: `${camel}Tools`,
    guards: `${camel}Guards`,
    actions: `${camel}Actions`,
    specFile: `${id}.flow.json`,
    machineFile: `${id}.machine.ts`,
    registryFile: `${id}.registry.ts`,
    implFile: `${id}.impl.ts`,
  };
}

/** The conventional export name of a tool module (`query_order` -> `queryOrder`). */
export function toolExportName(tool: string): string {
  return camelCase(tool);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An object key as source: bare when it is an identifier, else a JSON string; `__proto__` is always computed. */
export function propertyKey(key: string): string {
  if (key === '__proto__') return '["__proto__"]';
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}
