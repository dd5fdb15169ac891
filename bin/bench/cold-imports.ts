import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { coldArgs, COLD_DIR, plainEnv } from './cold.ts';
import { median } from './stats.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The packages whose import alone is timed, in fresh processes, against a process importing an empty module. */
const ALONE = ['xstate', 'zod', '@flowing/spec', 'jsonc-parser', 'jsep', 'node:crypto', '@flowing/runtime'] as const;
/** Node's functions that compile a module (ESM, CommonJS): loader samples under them are compile time. */
const COMPILE_FUNCTIONS = new Set(['compileSourceTextModule', 'wrapSafe', 'compileFunctionForCJSLoader']);

/** What a package of the cold Flowing process loads. */
export interface PackageLoad {
  name: string;
  modules: number;
  /** Source bytes on disk. */
  bytes: number;
  /** Modules of which at least one function ran during the session (after the imports). */
  ranInSession: number;
  /** CPU ms evaluating its modules (their top-level code and all it calls, other modules' top-level code apart), median. */
  evaluateMs: number;
  /** CPU ms of a fresh process importing it alone (its dependencies included), above one importing nothing, median. */
  aloneMs?: number;
}

/** Modules that only `root` pulls in (it dominates them in the import graph) and no function of which ran in the session. */
export interface LazyCandidate {
  root: string;
  /** The module that imports `root` (its first importer). */
  importedBy: string;
  modules: number;
  bytes: number;
  /** Estimated CPU ms their import costs: evaluating them, plus Node's loader cost per module and compile cost per byte. */
  estimateMs: number;
}

export interface ImportReport {
  profiles: number;
  aloneRuns: number;
  packages: PackageLoad[];
  modules: number;
  bytes: number;
  /** CPU ms of the imports, medians: all, in Node's module loader (compiling, and resolving, reading, linking), in GC. */
  importMs: number;
  compileMs: number;
  loaderMs: number;
  gcMs: number;
  /** CPU ms of the session after the imports, median. */
  sessionMs: number;
  /** Node's built-in modules the process imports, with the CPU ms of importing each alone when measured. */
  builtins: Array<{ name: string; aloneMs?: number }>;
  /** The modules whose evaluation costs most, with their CPU ms (medians). */
  evaluations: Array<{ module: string; ms: number }>;
  candidates: LazyCandidate[];
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** A module's printed name: its path in the repository, `node_modules/` and the tree's folder left out. */
function moduleName(url: string): string {
  const path = relative(REPO_ROOT, fileURLToPath(url));
  const inModules = path.lastIndexOf('node_modules/');
  if (inModules >= 0) return path.slice(inModules + 'node_modules/'.length);
  const tree = `${relative(REPO_ROOT, COLD_DIR)}/flowing/`;
  return path.startsWith(tree) ? path.slice(tree.length) : path;
}

/** The package a module belongs to. */
function packageOf(name: string): string {
  if (name.startsWith('runtime/')) return '@flowing/runtime';
  if (name.startsWith('spec/')) return '@flowing/spec';
  if (name.startsWith('machines/') || name.startsWith('tools/') || name.startsWith('bin/')) return 'app (machine, tools, entry)';
  const parts = name.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

interface Phase {
  evaluate: Map<string, number>;
  compile: number;
  loader: number;
  gc: number;
  imports: number;
  session: number;
}

/**
 * CPU ms of one profile, split at the session (the first sample inside `finish`). A sample of the imports counts for
 * the innermost module whose top-level code is on its stack (evaluating it, with all it calls), unless Node's module
 * loader is on the stack inside that (resolving, reading, compiling, linking), or it is GC.
 */
function splitProfile(profile: Profile): Phase {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const phase: Phase = { evaluate: new Map(), compile: 0, loader: 0, gc: 0, imports: 0, session: 0 };
  let inSession = false;
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const leaf = byId.get(profile.samples[i]!)!.callFrame;
    if (leaf.functionName === '(idle)') continue;
    let module: string | undefined;
    let inLoader = false;
    let compiling = false;
    let decided = false;
    for (let id: number | undefined = profile.samples[i]!; id !== undefined; id = parent.get(id)) {
      const { url, functionName, lineNumber } = byId.get(id)!.callFrame;
      if (functionName === 'finish' && url.endsWith('/bin/bench/cold/finish.js')) inSession = true;
      if (decided) continue;
      if (COMPILE_FUNCTIONS.has(functionName)) compiling = true;
      if (url.startsWith('node:internal/modules/')) {
        inLoader = true;
        decided = true;
      } else if (url.startsWith('file:') && functionName === '' && lineNumber === 0) {
        module = url;
        decided = true;
      }
    }
    if (inSession) {
      phase.session += ms;
      continue;
    }
    phase.imports += ms;
    if (leaf.functionName === '(garbage collector)') phase.gc += ms;
    else if (module) phase.evaluate.set(module, (phase.evaluate.get(module) ?? 0) + ms);
    else if (inLoader && compiling) phase.compile += ms;
    else if (inLoader) phase.loader += ms;
  }
  return phase;
}

/** Every module the process loaded, and how many functions of each ran in the session (coverage taken at the split). */
function sessionCoverage(dir: string): { loaded: string[]; ran: Map<string, number> } {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('coverage-'))
    .sort((a, b) => Number(a.split('-')[2]) - Number(b.split('-')[2]));
  if (files.length < 2) throw new Error(`expected the coverage of the imports and of the session, found ${files.length} report(s)`);
  const read = (file: string) =>
    (
      JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
        result: Array<{ url: string; functions: Array<{ ranges: Array<{ count: number }> }> }>;
      }
    ).result;
  const loaded = read(files[0]!)
    .map((script) => script.url)
    .filter((url) => url.startsWith('file:'));
  const ran = new Map<string, number>();
  for (const script of read(files[files.length - 1]!)) {
    if (script.url.startsWith('file:')) ran.set(script.url, script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0).length);
  }
  return { loaded, ran };
}

/**
 * The import graph of the process (from module hooks; they see ESM imports only), with the modules a package loads by
 * `require` attached to the package's first module that was imported.
 */
function importGraph(file: string, loaded: readonly string[]): { entry: string; edges: Map<string, string[]>; builtins: Set<string> } {
  const edges = new Map<string, string[]>();
  const builtins = new Set<string>();
  let entry: string | undefined;
  for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
    const { parent, url } = JSON.parse(line) as { parent: string | null; url: string };
    if (url.startsWith('node:')) builtins.add(url);
    if (!url.startsWith('file:')) continue;
    if (parent === null || !parent.startsWith('file:')) {
      entry ??= url;
      continue;
    }
    const list = edges.get(parent) ?? [];
    if (!list.includes(url)) list.push(url);
    edges.set(parent, list);
  }
  if (!entry) throw new Error('the module hooks saw no entry');
  const seen = new Set([entry, ...[...edges.values()].flat()]);
  for (const url of loaded) {
    if (seen.has(url)) continue;
    const pkg = packageOf(moduleName(url));
    const owner = [...seen].find((known) => packageOf(moduleName(known)) === pkg);
    if (!owner) continue;
    edges.set(owner, [...(edges.get(owner) ?? []), url]);
  }
  return { entry, edges, builtins };
}

/** The immediate dominator of every module reachable from `entry` (Cooper, Harvey, Kennedy). */
function dominators(entry: string, edges: Map<string, string[]>): Map<string, string> {
  const order: string[] = [];
  const visited = new Set<string>();
  const visit = (node: string) => {
    visited.add(node);
    for (const next of edges.get(node) ?? []) if (!visited.has(next)) visit(next);
    order.push(node);
  };
  visit(entry);
  order.reverse();
  const rank = new Map(order.map((node, i) => [node, i]));
  const preds = new Map<string, string[]>();
  for (const [from, tos] of edges) for (const to of tos) if (rank.has(from)) preds.set(to, [...(preds.get(to) ?? []), from]);
  const idom = new Map<string, string>([[entry, entry]]);
  const intersect = (a: string, b: string) => {
    while (a !== b) {
      while (rank.get(a)! > rank.get(b)!) a = idom.get(a)!;
      while (rank.get(b)! > rank.get(a)!) b = idom.get(b)!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const node of order.slice(1)) {
      const done = (preds.get(node) ?? []).filter((p) => idom.has(p));
      const next = done.slice(1).reduce(intersect, done[0]!);
      if (idom.get(node) !== next) {
        idom.set(node, next);
        changed = true;
      }
    }
  }
  return idom;
}

/**
 * CPU ms of a fresh process that imports `specifier`, from the repository. The baseline imports an empty module file:
 * the first import of a file sets up part of Node's loader, whichever package it is.
 */
function importAlone(specifier: string): number {
  const script = `await import(${JSON.stringify(specifier)}); const c = process.cpuUsage(); console.log((c.user + c.system) / 1000);`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', env: plainEnv() });
  if (child.status !== 0) throw new Error(`importing ${specifier} failed: ${child.stderr.slice(0, 500)}`);
  return Number(child.stdout.trim());
}

/**
 * What the cold Flowing process (the `flowing` tree of prepareCold) spends its imports on: one run under module hooks
 * (the import graph), one under NODE_V8_COVERAGE (which modules any function of ran during the session), `profiles`
 * runs under `--cpu-prof`, and each package of ALONE imported alone in `aloneRuns` fresh processes (less one importing
 * an empty module). Lazy-load candidates
 * are the modules one import alone pulls in, none of which ran in the session.
 */
export function analyzeImports(profiles: number, aloneRuns: number): ImportReport {
  const dir = mkdtempSync(join(tmpdir(), 'flowing-bench-imports-'));
  const run = (args: string[], env: Record<string, string> = {}) => {
    const child = spawnSync(process.execPath, [...args, ...coldArgs('flowing')], { cwd: REPO_ROOT, encoding: 'utf8', env: plainEnv(env) });
    if (child.status !== 0) throw new Error(`the cold Flowing process (${args.join(' ')}) failed: ${child.stderr.slice(0, 500)}`);
  };
  try {
    const graphFile = join(dir, 'graph.jsonl');
    const hooks = pathToFileURL(join(COLD_DIR, 'flowing/bin/bench/cold/graph-hooks.js')).href;
    run(['--import', `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)})`], {
      FLOWING_BENCH_GRAPH: graphFile,
    });
    run([], { NODE_V8_COVERAGE: join(dir, 'coverage') });
    const { loaded, ran } = sessionCoverage(join(dir, 'coverage'));
    const { entry, edges, builtins } = importGraph(graphFile, loaded);
    const phases: Phase[] = [];
    for (let i = 0; i < profiles; i++) {
      const profileDir = join(dir, `profile-${i}`);
      run(['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', profileDir]);
      phases.push(splitProfile(JSON.parse(readFileSync(join(profileDir, readdirSync(profileDir)[0]!), 'utf8')) as Profile));
    }
    const evaluated = (urls: Iterable<string>) =>
      median(phases.map((p) => [...urls].reduce((sum, url) => sum + (p.evaluate.get(url) ?? 0), 0)));
    const bytesOf = new Map(loaded.map((url) => [url, statSync(fileURLToPath(url)).size]));
    const totalBytes = [...bytesOf.values()].reduce((a, b) => a + b, 0);
    const compileMs = median(phases.map((p) => p.compile));
    const loaderMs = median(phases.map((p) => p.loader));

    const empty = median(Array.from({ length: aloneRuns }, () => importAlone(pathToFileURL(join(COLD_DIR, 'empty.js')).href)));
    const alone = new Map(
      ALONE.map((name) => [name as string, median(Array.from({ length: aloneRuns }, () => importAlone(name))) - empty]),
    );
    const byPackage = new Map<string, string[]>();
    for (const url of loaded) byPackage.set(packageOf(moduleName(url)), [...(byPackage.get(packageOf(moduleName(url))) ?? []), url]);
    const packages = [...byPackage]
      .map(([name, urls]) => ({
        name,
        modules: urls.length,
        bytes: urls.reduce((sum, url) => sum + bytesOf.get(url)!, 0),
        ranInSession: urls.filter((url) => (ran.get(url) ?? 0) > 0).length,
        evaluateMs: evaluated(urls),
        ...(alone.has(name) ? { aloneMs: alone.get(name)! } : {}),
      }))
      .sort((a, b) => b.bytes - a.bytes);

    // Candidates: a module whose dominated set ran nothing in the session, and whose dominator is not one already.
    const idom = dominators(entry, edges);
    const dominated = new Map<string, string[]>();
    for (const url of idom.keys()) {
      for (let at = url; ; at = idom.get(at)!) {
        dominated.set(at, [...(dominated.get(at) ?? []), url]);
        if (at === entry) break;
      }
    }
    const unused = (url: string) => dominated.get(url)!.every((m) => (ran.get(m) ?? 0) === 0);
    const importerOf = (url: string) => [...edges].find(([, tos]) => tos.includes(url))?.[0] ?? entry;
    const candidates = [...idom.keys()]
      .filter((url) => url !== entry && unused(url) && !(idom.get(url) !== entry && unused(idom.get(url)!)))
      .map((url) => {
        const set = dominated.get(url)!;
        const bytes = set.reduce((sum, m) => sum + (bytesOf.get(m) ?? 0), 0);
        return {
          root: moduleName(url),
          importedBy: moduleName(importerOf(url)),
          modules: set.length,
          bytes,
          estimateMs: evaluated(set) + (set.length * loaderMs) / loaded.length + (bytes * compileMs) / totalBytes,
        };
      })
      .sort((a, b) => b.estimateMs - a.estimateMs);
    return {
      profiles,
      aloneRuns,
      packages,
      modules: loaded.length,
      bytes: totalBytes,
      importMs: median(phases.map((p) => p.imports)),
      compileMs,
      loaderMs,
      gcMs: median(phases.map((p) => p.gc)),
      sessionMs: median(phases.map((p) => p.session)),
      candidates,
      builtins: [...builtins].sort().map((name) => (alone.has(name) ? { name, aloneMs: alone.get(name)! } : { name })),
      evaluations: loaded
        .map((url) => ({ module: moduleName(url), ms: evaluated([url]) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 8),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
