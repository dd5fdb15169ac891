import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { CliError } from '../cli-error.ts';

/**
 * The compiler options generated machines need: ES modules resolved the Node way, so their `.js` import specifiers
 * work under tsx and after `tsc` with plain `node`.
 */
const REQUIRED_OPTIONS: Record<string, unknown> = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  skipLibCheck: true,
};
const ESM_MODULES = new Set(['nodenext', 'node16', 'node18', 'node20', 'esnext', 'es2022', 'preserve']);
const NODE_RESOLUTIONS = new Set(['nodenext', 'node16', 'bundler']);
const PROJECT_FOLDERS = ['machines', 'tools'];

export interface TsconfigMerge {
  text: string;
  added: string[];
  kept: string[];
}

/**
 * A tsconfig.json for a new project: the required options, Node's types (TypeScript 6 loads no @types package
 * unless `types` names it; init adds @types/node), output in dist/, sources in machines/, tools/ and src/.
 */
export function newTsconfig(): string {
  const config = {
    compilerOptions: { ...REQUIRED_OPTIONS, types: ['node'], rootDir: '.', outDir: 'dist' },
    include: [...PROJECT_FOLDERS, 'src'],
  };
  return JSON.stringify(config, null, 2) + '\n';
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

/**
 * Adds the missing required options and the machines/ and tools/ folders to an existing tsconfig.json (comments and
 * layout kept). A value that is set differently is left alone and reported. `esmFolders`: the project stays
 * CommonJS and machines/ and tools/ are ES modules through package.json files of their own.
 */
export function mergeTsconfig(text: string, options: { esmFolders?: boolean } = {}): TsconfigMerge {
  const errors: ParseError[] = [];
  const config = parse(text, errors, { allowTrailingComma: true }) as Record<string, unknown> | undefined;
  if (errors.length || !config || typeof config !== 'object' || Array.isArray(config)) {
    const reason = errors[0] ? `${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}` : 'not an object';
    throw new CliError('INIT_BAD_TSCONFIG', `tsconfig.json cannot be read (${reason}); fix it and run init again`);
  }
  const compilerOptions = (config.compilerOptions ?? {}) as Record<string, unknown>;
  const added: string[] = [];
  const kept: string[] = [];
  let out = text;
  for (const [name, value] of Object.entries(REQUIRED_OPTIONS)) {
    if (compilerOptions[name] === undefined) {
      if (name === 'moduleResolution' && compilerOptions.module !== undefined) continue;
      out = applyEdits(out, modify(out, ['compilerOptions', name], value, FORMAT));
      added.push(`compilerOptions.${name} = ${JSON.stringify(value)}`);
    }
  }
  const module = String(compilerOptions.module ?? 'NodeNext').toLowerCase();
  const resolution = String(compilerOptions.moduleResolution ?? (module.startsWith('node') ? module : 'bundler')).toLowerCase();
  const outDir = typeof compilerOptions.outDir === 'string' ? compilerOptions.outDir : undefined;
  if (!ESM_MODULES.has(module)) {
    kept.push(
      `compilerOptions.module is "${String(compilerOptions.module)}": tsc compiles machines/ and tools/ to CommonJS too, which runs on Node 20.19 or newer (its require() loads @flowing/runtime, an ES module)`,
    );
  } else if (options.esmFolders && module.startsWith('node') && outDir !== undefined) {
    kept.push(
      `compilerOptions.module is "${String(compilerOptions.module)}": tsc writes machines/ and tools/ as ES modules to ${outDir}/, where no package.json says so; copy machines/package.json and tools/package.json next to them after tsc`,
    );
  }
  if (!NODE_RESOLUTIONS.has(resolution))
    kept.push(
      `compilerOptions.moduleResolution is "${String(compilerOptions.moduleResolution)}": @flowing/runtime's types are found through its exports map; use "NodeNext" or "Bundler"`,
    );
  const rootDir = typeof compilerOptions.rootDir === 'string' ? compilerOptions.rootDir.replace(/\\/g, '/').replace(/\/+$/, '') : undefined;
  if (rootDir !== undefined && !['', '.', './'].includes(rootDir)) {
    kept.push(
      `compilerOptions.rootDir is "${compilerOptions.rootDir}": machines/ and tools/ lie outside it, so tsc refuses them (TS6059) once your code imports a machine; set it to "." (the output then moves to ${outDir ?? 'its folder'}/${rootDir.replace(/^\.\//, '')}/)`,
    );
    return { text: out, added, kept };
  }
  if (Array.isArray(config.include)) {
    const include = config.include as unknown[];
    for (const folder of PROJECT_FOLDERS) {
      const covered = include.some(
        (entry) => typeof entry === 'string' && ['.', './', '**/*', '*', folder, `${folder}/**/*`, `./${folder}`].includes(entry),
      );
      if (covered) continue;
      out = applyEdits(out, modify(out, ['include', -1], folder, { ...FORMAT, isArrayInsertion: true }));
      added.push(`include "${folder}"`);
    }
  } else if (Array.isArray(config.files)) {
    kept.push('tsconfig.json lists "files" only: add "machines" and "tools" to an "include" list so tsc compiles them');
  }
  return { text: out, added, kept };
}
