/**
 * support-desk figures. (1) Model calls per user turn of a four-turn session, offline (scripted model, the example
 * tools), counted at the model provider whichever session asks: support-desk with its child machines (loaded as
 * `flowing run` loads them), the same flow flattened into one machine with a classify call per hop
 * (`bin/bench/fixtures/support-desk-flat.flow.json`, generated into `.flowing/bench/desk/`), and the public workflow it
 * was ported from, counted by hand below. (2) `flowing cost` wall time, a new CLI process each run, on support-desk and
 * on a generated 300-state machine, and `computeCost` in process on both.
 *
 *   node --conditions=@flowing/source --import tsx bin/bench/desk-calls.ts [runs=5]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createCodegen } from '@flowing/codegen';
import { loadProjectSpecs } from '@flowing/codegen/cli';
import { createMemoryStore, createRuntime, createScriptedProvider, type AnyMachineDefinition, type LlmProvider } from '@flowing/runtime';
import { computeCost, type FlowSpec } from '@flowing/spec';
import { loadMachine, loadMachineTree } from '../run/load.ts';
import { median } from './stats.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const WORK = join(REPO, '.flowing/bench/desk');
const FLAT_ID = 'support-desk-flat';

/** The four user turns: a general question, where an order is, a refund of it (approved by a person), goodbye. */
export const TURNS = [
  'Hello, how long does shipping take?',
  'Where is my order A1002?',
  'It was charged but never shipped, refund it please',
  'Thanks, that is all',
] as const;

/**
 * OpenAI Agents SDK, examples/customer_service/main.py (a triage agent handing off to an FAQ agent and a seat-booking
 * agent, each able to hand back), for the session its routines describe. Each `Runner.run` is one user turn: every
 * model response is a call, a tool call or a handoff is followed by another call of the (new) agent.
 */
export const ORIGINAL = {
  name: 'OpenAI Agents SDK customer_service (counted by hand)',
  turns: [
    { text: 'What are your baggage rules?', calls: 3, why: 'triage → transfer_to_faq_agent; FAQ → faq_lookup_tool; FAQ answers' },
    {
      text: 'I want to change my seat',
      calls: 3,
      why: 'FAQ → transfer_to_triage_agent; triage → transfer_to_seat_booking_agent; asks for the confirmation number',
    },
    { text: 'ABC123', calls: 1, why: 'seat booking asks for the seat' },
    { text: '12A', calls: 2, why: 'seat booking → update_seat; confirms' },
  ],
};

/** The scripted provider, counting every model call it answers. */
function countingModel(): { llm: LlmProvider; calls: () => number } {
  const scripted = createScriptedProvider();
  let calls = 0;
  const counted = <K extends 'classify' | 'extract' | 'generate' | 'agent'>(kind: K) =>
    ((...args: unknown[]) => {
      calls++;
      return (scripted[kind] as (...a: unknown[]) => unknown)(...args);
    }) as LlmProvider[K];
  return {
    llm: {
      ...scripted,
      classify: counted('classify'),
      extract: counted('extract'),
      generate: counted('generate'),
      agent: counted('agent'),
    },
    calls: () => calls,
  };
}

/**
 * Model calls of each of `TURNS` in one session of `machines[0]` (the others are the machines it can reach). A turn
 * that leaves the session waiting for an approval is approved (an event of a person, not a user turn) and counted
 * with its turn.
 */
export async function callsPerTurn(machines: readonly AnyMachineDefinition[]): Promise<number[]> {
  const model = countingModel();
  const runtime = createRuntime({ machines, store: createMemoryStore(), llm: model.llm });
  const session = await runtime.createSession(machines[0]!);
  const counts: number[] = [];
  for (const text of TURNS) {
    const before = model.calls();
    const result = await session.send({ type: 'USER_MESSAGE', text });
    if (!result.applied) throw new Error(`${machines[0]!.id}: '${text}' was refused: ${result.code} ${result.message}`);
    const snapshot = await session.snapshot();
    const ownPending = snapshot.approval !== undefined && snapshot.approval.decision === undefined;
    if (ownPending || snapshot.waitingOn?.approval) await session.send({ type: 'APPROVE' });
    counts.push(model.calls() - before);
  }
  return counts;
}

/** The flattened fixture as a machine of a scratch project under `.flowing/bench/desk/` (generated when it changed). */
async function flatMachine(): Promise<AnyMachineDefinition> {
  const dir = join(WORK, 'machines', FLAT_ID);
  mkdirSync(dir, { recursive: true });
  const spec = readFileSync(join(REPO, 'bin/bench/fixtures', `${FLAT_ID}.flow.json`), 'utf8');
  writeFileSync(join(dir, `${FLAT_ID}.flow.json`), spec.replace('"../../../machines/flow.schema.json"', '"../flow.schema.json"'));
  try {
    symlinkSync(join(REPO, 'tools'), join(WORK, 'tools'), 'dir');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const codegen = createCodegen({ rootDir: WORK });
  try {
    const result = await codegen.generate(join(dir, `${FLAT_ID}.flow.json`), { typeCheck: false });
    if (!result.ok) throw new Error(`${FLAT_ID}: ${result.problems.map((p) => `${p.path} ${p.code} ${p.message}`).join('; ')}`);
  } finally {
    codegen.dispose();
  }
  const cwd = process.cwd();
  process.chdir(WORK);
  try {
    return await loadMachine(FLAT_ID);
  } finally {
    process.chdir(cwd);
  }
}

/** Wall ms of `flowing cost <machine>` in a new process, `runs` times, in `cwd`. */
function costWallMs(cwd: string, machine: string, runs: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      ['--conditions=@flowing/source', '--import', 'tsx', join(REPO, 'bin/cli.ts'), 'cost', machine],
      {
        cwd,
        encoding: 'utf8',
      },
    );
    times.push(performance.now() - started);
    if (result.status === 2 || result.status === null) throw new Error(`flowing cost ${machine}: ${result.stderr}`);
  }
  return times;
}

/** Median ms of `computeCost` over `runs` runs. */
function computeMs(spec: FlowSpec, options: Parameters<typeof computeCost>[1], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    computeCost(spec, options);
    times.push(performance.now() - started);
  }
  return median(times);
}

const line = (name: string, counts: readonly number[]) => {
  const total = counts.reduce((a, b) => a + b, 0);
  return `  ${name.padEnd(64)} ${counts.map((n) => String(n).padStart(2)).join(' ')}   ${String(total).padStart(3)}   ${(total / counts.length).toFixed(2)}`;
};

async function main(runs: number): Promise<void> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const desk = await loadMachineTree('support-desk');
  const withChildren = await callsPerTurn(desk);
  const flattened = await callsPerTurn([await flatMachine()]);
  out(`model calls per user turn, four-turn session (scripted model, offline): ${TURNS.map((t) => `'${t}'`).join(', ')}`);
  out(`  ${'flow'.padEnd(64)} turn 1-4   total  per turn`);
  out(line('support-desk: handoffs to child machines', withChildren));
  out(line('flattened, one machine, classify per hop (bench fixture)', flattened));
  out(
    line(
      ORIGINAL.name,
      ORIGINAL.turns.map((t) => t.calls),
    ),
  );
  for (const [i, turn] of ORIGINAL.turns.entries()) out(`    original turn ${i + 1} '${turn.text}': ${turn.why}`);

  // flowing cost: the example, and a generated 300-state machine in a scratch project beside the bench's.
  // The studio's perf tests build it; imported at run time, since the bench is built with the CLI and tests are not.
  const { generatedMachine } = (await import(pathToFileURL(join(REPO, 'test/e2e/graph-machines.ts')).href)) as {
    generatedMachine: (id: string, states: number) => FlowSpec;
  };
  const large = generatedMachine('generated-300', 300);
  const costDir = join(WORK, 'cost');
  rmSync(join(costDir, 'machines'), { recursive: true, force: true });
  mkdirSync(join(costDir, 'machines', large.id), { recursive: true });
  writeFileSync(join(costDir, 'machines', large.id, `${large.id}.flow.json`), JSON.stringify(large, null, 2));
  try {
    symlinkSync(join(REPO, 'tools'), join(costDir, 'tools'), 'dir');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const specs = await loadProjectSpecs(REPO);
  const resolveMachine = (id: string) => specs.get(id)?.spec;
  const deskMs = costWallMs(REPO, 'support-desk', runs);
  const largeMs = costWallMs(costDir, large.id, runs);
  out(`flowing cost, wall time of a new CLI process, median of ${runs} (min-max):`);
  out(`  support-desk (3 machines)  ${median(deskMs).toFixed(0)} ms (${Math.min(...deskMs).toFixed(0)}-${Math.max(...deskMs).toFixed(0)})`);
  out(
    `  generated-300              ${median(largeMs).toFixed(0)} ms (${Math.min(...largeMs).toFixed(0)}-${Math.max(...largeMs).toFixed(0)})`,
  );
  out(`computeCost in process, median of ${runs * 3}:`);
  out(`  support-desk (3 machines)  ${computeMs(specs.get('support-desk')!.spec, { resolveMachine }, runs * 3).toFixed(2)} ms`);
  out(`  generated-300              ${computeMs(large, {}, runs * 3).toFixed(2)} ms`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main(Number(process.argv[2] ?? 5));
