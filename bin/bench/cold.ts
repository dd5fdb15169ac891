import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the cold-start processes' JavaScript is written (inside the repository, so `node_modules` resolves). */
export const COLD_DIR = join(REPO_ROOT, '.flowing/bench/cold');

/** The cold-start cases, as printed; the parent computes ratios against `bare`. */
export const COLD_CASES = {
  node: 'node -e, nothing imported',
  bare: '(b) bare XState',
  bareZod: "(b') bare XState, tools with zod",
  flowing: '(c) Flowing, memory store',
} as const;

export type ColdCaseId = keyof typeof COLD_CASES;

/** One cold process: milliseconds from spawn to exit, and what the process itself reported. */
export interface ColdRun {
  /** Spawn to exit, measured by the parent. */
  wall: number;
  /** Since the process started: its imports done, its session done. */
  imported: number;
  done: number;
  /** CPU time (user + system) of the process until its session was done. */
  cpu: number;
}

/** The trees written, one per process kind: `flowing` (the real packages), `bare` and `bareZod` (a shim for the runtime). */
type Tree = 'flowing' | 'bare' | 'bareZod';

/** The TypeScript the cold processes run, transpiled file by file; the rest of the tree is the built packages. */
function sources(): string[] {
  const tools = readdirSync(join(REPO_ROOT, 'tools'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `tools/${f}`);
  return [
    'bin/bench/workload.ts',
    'bin/bench/model.ts',
    'bin/bench/cold/finish.ts',
    'bin/bench/cold/graph-hooks.ts',
    'bin/bench/cold/flowing-entry.ts',
    'bin/bench/cold/bare-entry.ts',
    'machines/order-support/order-support.machine.ts',
    'machines/order-support/order-support.registry.ts',
    ...tools,
  ];
}

/** A package of its own under a tree's `node_modules`, so the tree resolves `name` to `source` (transpiled). */
function shimPackage(transpile: (file: string) => string, root: string, name: string, source: string): void {
  const dir = join(root, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', exports: './index.js' }));
  writeFileSync(join(dir, 'index.js'), transpile(source));
}

/**
 * Brings `runtime/dist` (and `spec/dist`) up to date with `tsc -b runtime` (nothing is written when they are) and
 * writes the cold processes' trees under COLD_DIR: the entries, the workload, the order-support machine and the tools
 * as JavaScript. In the bare trees `@flowing/runtime` resolves to plain-runtime.ts, and in `bare` `zod` to no-zod.ts.
 * Answers the reason when the runtime cannot be built.
 */
export async function prepareCold(): Promise<string | undefined> {
  const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
  const built = spawnSync(process.execPath, [tsc, '-b', 'runtime'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (built.status !== 0) return `tsc -b runtime failed: ${(built.stdout + built.stderr).trim().split('\n').slice(0, 3).join(' ')}`;
  if (!existsSync(join(REPO_ROOT, 'runtime/dist/index.js'))) return 'tsc -b runtime wrote no runtime/dist/index.js';
  const ts = (await import('typescript')).default;
  const transpile = (file: string) =>
    ts.transpileModule(readFileSync(join(REPO_ROOT, file), 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
        rewriteRelativeImportExtensions: true,
      },
    }).outputText;
  rmSync(COLD_DIR, { recursive: true, force: true });
  const trees: Tree[] = ['flowing', 'bare', 'bareZod'];
  for (const tree of trees) {
    const root = join(COLD_DIR, tree);
    for (const file of sources()) {
      const target = join(root, file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, transpile(file));
    }
    writeFileSync(join(root, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
    if (tree !== 'flowing') shimPackage(transpile, root, '@flowing/runtime', 'bin/bench/cold/plain-runtime.ts');
    if (tree === 'bare') shimPackage(transpile, root, 'zod', 'bin/bench/cold/no-zod.ts');
  }
  writeFileSync(join(COLD_DIR, 'empty.js'), '');
  return undefined;
}

/** The node arguments of a case's process (no loader flags: plain JavaScript and the built packages). */
export function coldArgs(id: ColdCaseId): string[] {
  switch (id) {
    case 'node':
      return [
        '-e',
        'const c = process.cpuUsage(); const t = performance.now(); console.log(JSON.stringify({ imported: t, done: t, cpuMs: (c.user + c.system) / 1000 }))',
      ];
    case 'bare':
      return [join(COLD_DIR, 'bare/bin/bench/cold/bare-entry.js')];
    case 'bareZod':
      return [join(COLD_DIR, 'bareZod/bin/bench/cold/bare-entry.js')];
    case 'flowing':
      return [join(COLD_DIR, 'flowing/bin/bench/cold/flowing-entry.js')];
  }
}

/** This environment without what would change a child's startup (loader options, coverage). */
export function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  if (!extra.NODE_V8_COVERAGE) delete env.NODE_V8_COVERAGE;
  return env;
}

/** One fresh process of a case, timed from spawn to exit. */
export function coldRun(id: ColdCaseId): ColdRun {
  const started = performance.now();
  const child = spawnSync(process.execPath, coldArgs(id), { cwd: REPO_ROOT, encoding: 'utf8', env: plainEnv(), timeout: 60_000 });
  const wall = performance.now() - started;
  if (child.status !== 0) throw new Error(`cold ${id} exited with ${child.signal ?? child.status}: ${child.stderr.slice(0, 1_000)}`);
  const line = child.stdout.trim().split('\n').pop() ?? '';
  const reported = JSON.parse(line) as { imported: number; done: number; cpuMs: number };
  return { wall, imported: reported.imported, done: reported.done, cpu: reported.cpuMs };
}

/** `runs` processes of every case, the order rotated per run so no case always comes first. */
export function measureCold(runs: number): Map<ColdCaseId, ColdRun[]> {
  const ids = Object.keys(COLD_CASES) as ColdCaseId[];
  const results = new Map<ColdCaseId, ColdRun[]>(ids.map((id) => [id, []]));
  // One untimed process of each first: the files are in the page cache before any is timed.
  for (const id of ids) coldRun(id);
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[(i + run) % ids.length]!;
      results.get(id)!.push(coldRun(id));
    }
  }
  return results;
}
