/**
 * Words that cannot name a binding (`export const x`, `import { x }`) in an ES module, which is strict-mode code:
 * the ECMAScript reserved words, the words reserved in strict mode, `await` (reserved in modules), `eval` and
 * `arguments` (strict mode forbids binding them), and `undefined` (a binding would shadow the global). TypeScript's
 * contextual keywords (`type`, `declare`, `as`, `any` ...) are not here: they are legal binding names.
 */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  // ECMAScript reserved words
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum',
  'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'null',
  'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with',
  // reserved in strict mode, and `await` in modules
  'implements', 'interface', 'let', 'package', 'private', 'protected', 'public', 'static', 'yield', 'await',
  // strict mode forbids binding these; a binding named `undefined` would shadow the global
  'eval', 'arguments', 'undefined',
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
