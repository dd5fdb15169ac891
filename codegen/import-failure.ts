import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Problem } from './problems.ts';

/** The package.json nearest above `file` (the one Node reads the module format from), and its `"type"`. */
function packageScope(file: string): { path: string; type: unknown } | undefined {
  let dir = dirname(file);
  for (;;) {
    const path = join(dir, 'package.json');
    try {
      return { path, type: (JSON.parse(readFileSync(path, 'utf8')) as { type?: unknown }).type };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return { path, type: undefined };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Why a TypeScript module under `rootDir` could not be imported, in words that name the cause. A `.ts` file in a
 * CommonJS scope (`"type": "commonjs"`, as `npm init -y` writes, or no type) is read by Node as CommonJS and not
 * compiled, so its first type annotation is a syntax error ("Missing initializer in const declaration"): that is
 * said, with the fix. A missing package suggests `npm install`. Anything else is the error's first line.
 * @example explainImportFailure(root, join(root, 'tools/get_order_status.ts'), error)
 */
export function explainImportFailure(rootDir: string, file: string, error: unknown): string {
  const first = error instanceof Error ? error.message.split('\n')[0]! : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  if (/\.tsx?$/.test(file) && (error as { name?: unknown } | undefined)?.name === 'SyntaxError') {
    const scope = packageScope(file);
    if (scope?.type !== 'module') {
      const where =
        scope === undefined
          ? 'no package.json is above it'
          : `${relative(rootDir, scope.path).split('\\').join('/') || 'package.json'} has ${scope.type === undefined ? 'no "type"' : `"type": ${JSON.stringify(scope.type)}`}`;
      const folder = relative(rootDir, dirname(file)).split('\\').join('/').split('/')[0] || '.';
      return (
        `Node loads it as CommonJS (${where}), which does not compile TypeScript, so it failed with "SyntaxError: ${first}". ` +
        `Generated machines and tools are ES modules: set "type": "module" in package.json, or, if your other code must stay CommonJS, ` +
        `add ${folder}/package.json with {"type": "module"} (flowing init does one or the other)`
      );
    }
  }
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return `${first} (run npm install?)`;
  return first;
}

/**
 * Points SPEC_UNKNOWN_TOOL problems at the real cause when the tool's file exists but did not import: the validator
 * only sees that the tool is missing. `failedFiles` are the project-relative files that failed (`tools/<name>.ts`).
 */
export function explainUnknownTools<T extends Problem>(problems: T[], failedFiles: ReadonlySet<string>): T[] {
  return problems.map((problem) => {
    const tool = problem.code === 'SPEC_UNKNOWN_TOOL' ? /^tool '([a-z][a-z0-9_]*)'/.exec(problem.message)?.[1] : undefined;
    if (tool === undefined || !failedFiles.has(`tools/${tool}.ts`)) return problem;
    return {
      ...problem,
      message: `tool '${tool}' is in tools/${tool}.ts, which exists but could not be imported (CODEGEN_TOOL_LOAD_FAILED says why)`,
    };
  });
}
