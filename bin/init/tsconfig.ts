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

/** A tsconfig.json for a new project: the required options, output in dist/, sources in machines/, tools/ and src/. */
export function newTsconfig(): string {
  const config = {
    compilerOptions: { ...REQUIRED_OPTIONS, rootDir: '.', outDir: 'dist' },
    include: [...PROJECT_FOLDERS, 'src'],
  };
  return JSON.stringify(config, null, 2) + '\n';
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

/**
 * Adds the missing required options and the machines/ and tools/ folders to an existing tsconfig.json (comments and
 * layout kept). A value that is set differently is left alone and reported.
 */
export function mergeTsconfig(text: string): TsconfigMerge {
  const errors: ParseError[] = [];
  const config = parse(text, errors, { allowTrailingComma: true }) as Record<string, unknown> | undefined;
  if (errors.length || !config || typeof config !== 'object' || Array.isArray(config)) {
    const reason = errors[0] ? `${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}` : 'not an object';
    throw new CliError('INIT_BAD_TSCONFIG', `tsconfig.json cannot be read (${reason}); fix it and run init again`);
  }
  const options = (config.compilerOptions ?? {}) as Record<string, unknown>;
  const added: string[] = [];
  const kept: string[] = [];
  let out = text;
  for (const [name, value] of Object.entries(REQUIRED_OPTIONS)) {
    if (options[name] === undefined) {
      if (name === 'moduleResolution' && options.module !== undefined) continue;
      out = applyEdits(out, modify(out, ['compilerOptions', name], value, FORMAT));
      added.push(`compilerOptions.${name} = ${JSON.stringify(value)}`);
    }
  }
  const module = String(options.module ?? 'NodeNext').toLowerCase();
  const resolution = String(options.moduleResolution ?? (module.startsWith('node') ? module : 'bundler')).toLowerCase();
  if (!ESM_MODULES.has(module)) kept.push(`compilerOptions.module is "${String(options.module)}": generated machines are ES modules, use "NodeNext"`);
  if (!NODE_RESOLUTIONS.has(resolution)) kept.push(`compilerOptions.moduleResolution is "${String(options.moduleResolution)}": use "NodeNext"`);
  if (Array.isArray(config.include)) {
    const include = config.include as unknown[];
    for (const folder of PROJECT_FOLDERS) {
      const covered = include.some((entry) => typeof entry === 'string' && ['.', './', '**/*', '*', folder, `${folder}/**/*`, `./${folder}`].includes(entry));
      if (covered) continue;
      out = applyEdits(out, modify(out, ['include', -1], folder, { ...FORMAT, isArrayInsertion: true }));
      added.push(`include "${folder}"`);
    }
  } else if (Array.isArray(config.files)) {
    kept.push('tsconfig.json lists "files" only: add "machines" and "tools" to an "include" list so tsc compiles them');
  }
  return { text: out, added, kept };
}
