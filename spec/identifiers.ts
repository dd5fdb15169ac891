/** Names that would collide with Object.prototype members wherever a spec name becomes a property key. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
]);

/**
 * Words that cannot name a binding (`export const x`, `import { x }`) in an ES module, which is strict-mode code:
 * the ECMAScript reserved words, the words reserved in strict mode, `await` (reserved in modules), `eval` and
 * `arguments` (strict mode forbids binding them), and `undefined` (a binding would shadow the global). TypeScript's
 * contextual keywords (`type`, `declare`, `as`, `any` ...) are not here: they are legal binding names.
 */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  // ECMAScript reserved words
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  // reserved in strict mode, and `await` in modules
  'implements',
  'interface',
  'let',
  'package',
  'private',
  'protected',
  'public',
  'static',
  'yield',
  'await',
  // strict mode forbids binding these; a binding named `undefined` would shadow the global
  'eval',
  'arguments',
  'undefined',
]);

/** True when `name` cannot be declared as a binding in a generated module. */
export function isReservedWord(name: string): boolean {
  return RESERVED_WORDS.has(name);
}

/**
 * The camelCase identifier codegen derives from a snake_case or kebab-case name (`query_order` -> `queryOrder`,
 * `order-support` -> `orderSupport`): a tool module's export, a machine's exports.
 */
export function generatedIdentifier(name: string): string {
  return name.replace(/[-_]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Device names Windows reserves in every folder, with any extension: `con.ts` or `machines/aux/` cannot exist there. */
const WINDOWS_DEVICE_NAMES = ['con', 'prn', 'aux', 'nul', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`com${n}`, `lpt${n}`])];

/**
 * Names no tool and no machine may have, whatever their pattern allows, each with the reason: they name files
 * (`tools/<name>.ts`, `machines/<id>/<id>.flow.json`) and module exports (`<name>`, `<id>`). One list for the
 * validator and codegen's scaffolding, so neither writes a file the other refuses.
 */
export const RESERVED_FILE_NAMES: ReadonlyMap<string, string> = new Map([
  ['then', 'a module exporting `then` is a thenable: `await import()` of it calls that function instead of returning the module'],
  ['node_modules', 'it is the name of installed dependency folders, which editors, watchers, linters and packers skip'],
  ...WINDOWS_DEVICE_NAMES.map((name): [string, string] => [
    name,
    `it is a device name on Windows, where no file or folder can be called ${name} (with any extension)`,
  ]),
]);

/** Why `name` (a tool name or machine id, matched without regard to case) is refused, or undefined. */
function reservedFileNameReason(name: string): string | undefined {
  return RESERVED_FILE_NAMES.get(name.toLowerCase());
}

/** What a tool module imports by name (`z` from zod, `defineTool` and `ToolError` from the runtime). */
const TOOL_MODULE_IMPORTS: ReadonlySet<string> = new Set(['z', 'defineTool', 'ToolError']);

/**
 * Why a snake_case tool name cannot name its tool module's export, or undefined when it can. The export is the
 * camelCase name (`query_order` -> `queryOrder`): a reserved word cannot be declared, and an import of the module
 * itself (`z`, `defineTool`) would be declared twice.
 * @example toolExportProblem('class') // "tool name 'class' would make its module export `class`, a reserved word ..."
 */
export function toolExportProblem(name: string): string | undefined {
  const exportName = generatedIdentifier(name);
  if (isReservedWord(exportName)) {
    return `tool name '${name}' would make its module export \`${exportName}\`, a reserved word in JavaScript; choose another name, e.g. '${name}_tool'`;
  }
  if (TOOL_MODULE_IMPORTS.has(exportName)) {
    return `tool name '${name}' would make its module export \`${exportName}\`, a name the tool module imports; choose another name, e.g. '${name}_tool'`;
  }
  return undefined;
}

/**
 * Why a snake_case tool name cannot be used, or undefined when it can: a name of RESERVED_FILE_NAMES (`then`, `con`
 * ...) cannot name `tools/<name>.ts`, then toolExportProblem. The validator and codegen's tool stubs both ask this.
 * @example toolNameProblem('then') // "tool name 'then' is reserved: a module exporting `then` is a thenable ..."
 */
export function toolNameProblem(name: string): string | undefined {
  const reason = reservedFileNameReason(name);
  if (reason !== undefined) return `tool name '${name}' is reserved: ${reason}; choose another name, e.g. '${name}_tool'`;
  return toolExportProblem(name);
}

/**
 * Why a kebab-case machine id cannot be used, or undefined when it can. A name of RESERVED_FILE_NAMES is refused
 * (`then`, `con` ...): the id names the spec's folder and file too. The id names the generated exports
 * (`order-support` -> `orderSupport`, `orderSupportMachine`), so its camelCase form may not be a reserved word; and
 * like every name a spec declares it may not be an Object.prototype member (names end up as object keys). Codegen
 * could rename `class` to `classDefinition`, but then a machine's export name would no longer follow from its id;
 * the studio's New machine check and the validator apply this one rule.
 * @example machineIdProblem('class') // "machine id 'class' is reserved in JavaScript ..."
 */
export function machineIdProblem(id: string): string | undefined {
  const reason = reservedFileNameReason(id);
  if (reason !== undefined) return `machine id '${id}' is reserved: ${reason}; choose another, e.g. '${id}-flow'`;
  if (RESERVED_NAMES.has(id)) return `machine id '${id}' is reserved (an Object.prototype member); choose another, e.g. '${id}-flow'`;
  const exportName = generatedIdentifier(id);
  if (isReservedWord(exportName)) {
    return `machine id '${id}' is reserved in JavaScript: its generated export would be \`${exportName}\`; choose another, e.g. '${id}-flow'`;
  }
  return undefined;
}
