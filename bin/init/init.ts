import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from '../cli-error.ts';
import { codeDependingOnType, ESM_FOLDER_PACKAGE, ESM_FOLDERS } from './module-type.ts';
import { mergePackageJson, newPackageJson, type ModuleTypePlan, type PackageAdditions } from './package-json.ts';
import { EXAMPLE_MACHINE_ID, EXAMPLE_SPEC, EXAMPLE_TOOL, EXAMPLE_TOOL_NAME } from './template.ts';
import { mergeTsconfig, newTsconfig } from './tsconfig.ts';

/** Versions a new project gets; test/cli/init.test.ts keeps them equal to the workspace's own pins. */
export const INIT_VERSIONS = { xstate: '^5.33.3', zod: '^4.6.7', typescript: '^6.0.3', '@types/node': '^20.19.43' } as const;
/**
 * Install scripts a Flowing project needs: better-sqlite3 fetches (or builds) its native binding, for the SQLite
 * store; esbuild checks its platform binary, which tsx uses to load your TypeScript.
 */
export const INIT_ALLOWED_SCRIPTS = ['better-sqlite3', 'esbuild'] as const;
const IGNORED = ['node_modules/', 'dist/', '.flowing/'];

export interface InitReport {
  root: string;
  added: string[];
  kept: string[];
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Writes a new file; never replaces one that appeared meanwhile (`wx`). */
async function createFile(path: string, text: string): Promise<boolean> {
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(path, text, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function replaceFile(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, path);
}

function additionsFor(version: string): PackageAdditions {
  return {
    dependencies: { '@flowing/runtime': `^${version}`, xstate: INIT_VERSIONS.xstate, zod: INIT_VERSIONS.zod },
    devDependencies: { flowing: `^${version}`, typescript: INIT_VERSIONS.typescript, '@types/node': INIT_VERSIONS['@types/node'] },
    scripts: { studio: 'flowing studio', codegen: 'flowing codegen', 'codegen:check': 'flowing codegen --check' },
    allowScripts: Object.fromEntries(INIT_ALLOWED_SCRIPTS.map((name) => [name, true])),
  };
}

/**
 * Sets up a folder (empty, or an existing TypeScript project) for Flowing: an example machine and its tool, the
 * dependencies, the tsconfig settings generated code needs, npm scripts and `.flowing/` in .gitignore. Nothing that
 * exists is overwritten; JSON files only gain entries they lack.
 *
 * Generated machines and tools are ES modules. A project that is not `"type": "module"` is switched to it when no
 * file of its own depends on the type (a folder fresh from `npm init -y`, which writes `"type": "commonjs"`);
 * otherwise its type is kept and machines/ and tools/ get a package.json of their own saying `"type": "module"`.
 */
export async function initProject(dir: string, version: string): Promise<InitReport> {
  const root = resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (info && !info.isDirectory()) throw new CliError('INIT_NOT_A_DIRECTORY', `${root} is not a folder`);
  await mkdir(root, { recursive: true });
  const added: string[] = [];
  const kept: string[] = [];
  const create = async (relative: string, text: string) => {
    if (await createFile(join(root, relative), text)) added.push(relative);
    else kept.push(`${relative} (exists)`);
  };

  const specPath = `machines/${EXAMPLE_MACHINE_ID}/${EXAMPLE_MACHINE_ID}.flow.json`;
  if (await exists(join(root, 'machines', EXAMPLE_MACHINE_ID))) kept.push(`machines/${EXAMPLE_MACHINE_ID}/ (exists)`);
  else await create(specPath, JSON.stringify(EXAMPLE_SPEC, null, 2) + '\n');
  await create(`tools/${EXAMPLE_TOOL_NAME}.ts`, EXAMPLE_TOOL);

  const additions = additionsFor(version);
  const pkgPath = join(root, 'package.json');
  const pkgText = await readFile(pkgPath, 'utf8').catch(() => undefined);
  let esmFolders = false;
  if (pkgText === undefined) {
    await create('package.json', newPackageJson(basename(root), additions));
  } else {
    const merged = mergePackageJson(pkgText, additions, await moduleTypePlan(root));
    if (merged.added.length) await replaceFile(pkgPath, merged.text);
    added.push(...merged.added.map((entry) => `package.json: ${entry}`));
    kept.push(...merged.kept.map((entry) => `package.json: ${entry}`));
    esmFolders = (JSON.parse(merged.text) as { type?: unknown }).type !== 'module';
  }
  if (esmFolders) for (const folder of ESM_FOLDERS) await create(`${folder}/package.json`, ESM_FOLDER_PACKAGE);

  const tsconfigPath = join(root, 'tsconfig.json');
  const tsconfigText = await readFile(tsconfigPath, 'utf8').catch(() => undefined);
  if (tsconfigText === undefined) {
    await create('tsconfig.json', newTsconfig());
  } else {
    const merged = mergeTsconfig(tsconfigText, { esmFolders });
    if (merged.added.length) await replaceFile(tsconfigPath, merged.text);
    added.push(...merged.added.map((entry) => `tsconfig.json: ${entry}`));
    kept.push(...merged.kept.map((entry) => `tsconfig.json: ${entry}`));
  }

  const ignorePath = join(root, '.gitignore');
  const ignoreText = await readFile(ignorePath, 'utf8').catch(() => undefined);
  const lines = new Set((ignoreText ?? '').split(/\r?\n/).map((line) => line.trim()));
  const missing = IGNORED.filter((entry) => !lines.has(entry) && !lines.has(entry.slice(0, -1)) && !lines.has(`/${entry}`));
  if (ignoreText === undefined) {
    await create('.gitignore', IGNORED.join('\n') + '\n');
  } else if (missing.length) {
    const separator = ignoreText === '' || ignoreText.endsWith('\n') ? '' : '\n';
    await writeFile(ignorePath, `${ignoreText}${separator}${missing.join('\n')}\n`);
    added.push(`.gitignore: ${missing.join(', ')}`);
  }
  return { root, added, kept };
}

/**
 * Whether the project can become `"type": "module"`: yes unless a file of its own outside machines/ and tools/ (which
 * are ES modules either way) is read by the type.
 */
async function moduleTypePlan(root: string): Promise<ModuleTypePlan> {
  const found = await codeDependingOnType(root, (path) => ESM_FOLDERS.some((folder) => path.startsWith(`${folder}/`)));
  return found === undefined ? { kind: 'switch' } : { kind: 'folders', because: found };
}

/** `flowing init [dir]`: prints what it added and what it left alone; exit 0, or 1 with a coded error. */
export async function initCommand(dir: string | undefined, version: string): Promise<number> {
  try {
    const report = await initProject(dir ?? process.cwd(), version);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    if (report.added.length) {
      out(`flowing init: added to ${report.root}`);
      for (const entry of report.added) out(`  + ${entry}`);
    } else {
      out(`flowing init: nothing to add in ${report.root}`);
    }
    if (report.kept.length) {
      out('left as it was:');
      for (const entry of report.kept) out(`  = ${entry}`);
    }
    out('next: npm install && npx flowing codegen (writes the machine module), then npx flowing studio,');
    out(
      `  or run the example: npx flowing run ${EXAMPLE_MACHINE_ID} --events FILE (JSON lines, e.g. {"type": "ASK", "orderId": "A1"}), npx flowing test`,
    );
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`${error.code} ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
