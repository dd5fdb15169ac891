/**
 * Codegen timing: generate + type-check the examples and generated 200- and 300-state machines (and a 200-state one
 * whose transitions all assign something different: ~400 named assigns), cold (a fresh CLI process on the sources,
 * as `npm run gen` runs it) and warm (one long-lived code generator, as the studio keeps one, after an edit of the
 * spec), with medians over several runs, the line counts of the generated machine modules, and `flowing codegen`
 * cold on the project `flowing init` makes: its first run (a new project each time: nothing checked yet) and a run
 * again on the unchanged project (its clean check is reused from node_modules/.cache/flowing). Wall time and CPU time
 * are both shown: on a shared, loaded machine the wall time mostly measures the other processes, the CPU time much
 * less so.
 * Run with `npm run bench:codegen [-- runs [parts]]` (default 5 runs per figure; parts: a comma list of `init`,
 * `cold`, `warm`, default all).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECK_CACHE_FILE, createCodegen } from '@flowing/codegen';

const root = process.cwd();
const runs = Number(process.argv[2] ?? 5);
const parts = new Set((process.argv[3] ?? 'init,cold,warm').split(','));
const EXAMPLES = ['machines/order-support/order-support.flow.json', 'machines/incident-triage/incident-triage.flow.json'];

/** A machine of `size` states; with `distinctAssigns`, every transition's assign differs (one named action each). */
function bigSpec(id: string, size: number, distinctAssigns = false) {
  const states: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) {
    const next = i + 1 < size ? `s${i + 1}` : 'done';
    if (i % 10 === 5) {
      states[`s${i}`] = {
        invoke: {
          tool: 'fetch_metrics',
          input: { service: 'context.service' },
          onDone: { target: next, assign: { p99: 'output.p99Ms' } },
          onError: 'done',
        },
      };
    } else if (i % 10 === 9) {
      states[`s${i}`] = {
        invoke: {
          llm: 'generate',
          prompt: 'Step {{ context.count }} of {{ context.service }}',
          onDone: { target: next, assign: { note: 'output.text' } },
          onError: 'done',
        },
      };
    } else {
      states[`s${i}`] = {
        on: {
          NEXT: [
            {
              target: next,
              guard: `context.count >= ${i % 7} && event.weight > 0`,
              assign: { count: distinctAssigns ? `context.count + event.weight * ${i}` : 'context.count + event.weight' },
            },
            { target: `s${(i * 7) % size}`, assign: distinctAssigns ? { count: `context.count - ${i}` } : { flag: '!context.flag' } },
          ],
          RESET: { target: 's0', assign: { count: '0' } },
        },
        after: { '60000': 'done' },
      };
    }
  }
  states.done = { type: 'final' };
  return {
    specVersion: 1,
    id,
    context: {
      count: { type: 'number', default: 0 },
      flag: { type: 'boolean', default: false },
      service: { type: 'string', default: 'api' },
      p99: { type: 'number', optional: true },
      note: { type: 'string', optional: true },
    },
    events: { NEXT: { weight: { type: 'number' } }, RESET: {} },
    initial: 's0',
    states,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
};
const figure = (values: number[]) => `median ${median(values)} ms (${values.join(', ')})`;

// The child reports the CPU time it used (user + system) on stderr as it exits.
const CPU_REPORT =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("CPU_MS "+Math.round((u.user+u.system)/1000)+"\\n")})';

/** One fresh process: the whole `flowing codegen [spec]` wall and CPU time, and its own type-check time. */
function coldRun(spec: string | undefined, cwd = root): { wall: number; cpu: number; typeCheck: number; reused: boolean } {
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      CPU_REPORT,
      '--conditions=@flowing/source',
      '--import',
      'tsx',
      join(root, 'bin/cli.ts'),
      'codegen',
      '--json',
      ...(spec ? [spec] : []),
    ],
    { cwd, encoding: 'utf8' },
  );
  const wall = Math.round(performance.now() - started);
  if (child.status !== 0) throw new Error(`codegen ${spec ?? cwd} exited ${child.status}: ${child.stdout}${child.stderr}`);
  const report = JSON.parse(child.stdout) as { specs: Array<{ timings: Record<string, number>; typeCheck?: string }> };
  const typeCheck = report.specs.reduce((sum, s) => sum + (s.timings.typeCheck ?? 0), 0);
  const reused = report.specs.every((s) => s.typeCheck === 'reused');
  return { wall, cpu: Number(/CPU_MS (\d+)/.exec(child.stderr)?.[1]), typeCheck, reused };
}

/** The project `flowing init` makes, in a temporary folder, resolving packages like the repository does. */
function initProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flowing-bench-init-'));
  const init = spawnSync(process.execPath, ['--conditions=@flowing/source', '--import', 'tsx', join(root, 'bin/cli.ts'), 'init', dir], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`flowing init exited ${init.status}: ${init.stderr}`);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** CPU milliseconds this process spends in `work` (type checking is synchronous, on this thread). */
async function cpuOf<T>(work: () => Promise<T>): Promise<{ result: T; cpu: number }> {
  const before = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(before);
  return { result, cpu: Math.round((used.user + used.system) / 1000) };
}

const BIG: Array<[string, number, boolean]> = [
  ['big-200', 200, false],
  ['big-300', 300, false],
  ['big-200-assigns', 200, true],
];
const specs = [...EXAMPLES];
for (const [id, size, distinct] of BIG) {
  mkdirSync(join(root, `.flowing/bench/${id}`), { recursive: true });
  writeFileSync(join(root, `.flowing/bench/${id}/${id}.flow.json`), JSON.stringify(bigSpec(id, size, distinct), null, 2));
  specs.push(`.flowing/bench/${id}/${id}.flow.json`);
}
/** Prints each figure as soon as it is measured (a full run takes minutes on a loaded machine). */
const report = (what: string, value: string) => console.log(`${what.padEnd(56)} ${value}`);

if (parts.has('init')) {
  const first: Array<ReturnType<typeof coldRun>> = [];
  const again: Array<ReturnType<typeof coldRun>> = [];
  for (let i = 0; i < runs; i++) {
    const init = initProject();
    try {
      first.push(coldRun(undefined, init));
      again.push(coldRun(undefined, init));
    } finally {
      rmSync(init, { recursive: true, force: true });
    }
  }
  if (first.some((c) => c.reused) || again.some((c) => !c.reused)) throw new Error('init project: unexpected type-check reuse');
  report('cold `flowing codegen` wall, new init project', figure(first.map((c) => c.wall)));
  report('cold `flowing codegen` CPU, new init project', figure(first.map((c) => c.cpu)));
  report('cold `flowing codegen` wall, init project again', figure(again.map((c) => c.wall)));
  report('cold `flowing codegen` CPU, init project again', figure(again.map((c) => c.cpu)));
}

for (const spec of parts.has('cold') ? specs : []) {
  // Each run checks from scratch: the clean checks of earlier runs (kept in node_modules/.cache) are dropped first.
  const cold = Array.from({ length: runs }, () => {
    rmSync(join(root, CHECK_CACHE_FILE), { force: true });
    return coldRun(spec);
  });
  const name = spec.split('/').pop()!;
  report(`cold process wall, ${name}`, figure(cold.map((c) => c.wall)));
  report(`cold process CPU, ${name}`, figure(cold.map((c) => c.cpu)));
  report(`cold type-check wall, ${name}`, figure(cold.map((c) => c.typeCheck)));
}

if (!parts.has('warm')) process.exit(0);
const codegen = createCodegen({ rootDir: root });
const first = await codegen.generate(EXAMPLES[0]!, { write: false });
report('in-process first check (order-support)', `${first.timings.typeCheck} ms`);
const lines: string[] = [];
for (const spec of specs) {
  const text = readFileSync(join(root, spec), 'utf8');
  const warm: number[] = [];
  const warmCpu: number[] = [];
  await codegen.generate(spec, { write: false });
  for (let i = 0; i < runs; i++) {
    // Each run generates from an edited spec (as the studio's check after a keystroke does), not the same text again.
    const edited = JSON.stringify({ ...JSON.parse(text), description: `edit ${i}` }, null, 2);
    const { result, cpu } = await cpuOf(() => codegen.generate(spec, { write: false, text: edited }));
    if (!result.ok) throw new Error(`${spec}: ${JSON.stringify(result.problems.slice(0, 3))}`);
    warm.push(result.timings.total!);
    warmCpu.push(cpu);
    if (i === 0) lines.push(`${result.files[0]!.path}: ${result.files[0]!.text.split('\n').length - 1} lines`);
  }
  report(`warm codegen + type-check wall, ${spec.split('/').pop()}`, figure(warm));
  report(`warm codegen + type-check CPU, ${spec.split('/').pop()}`, figure(warmCpu));
}
codegen.dispose();
for (const line of lines) console.log(line);
