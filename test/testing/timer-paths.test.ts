import { mkdtemp, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMemoryStore, createRuntime, type AnyMachineDefinition } from '@flowing/runtime';
import { caseFromLog, parseCase, serializeCase, testCase, testPaths } from '@flowing/runtime/testing';
import { FlowSpecSchema } from '@flowing/spec';
import { createCodegen } from '../../codegen/index.ts';
import { REPO_DIR } from '../helpers/project.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-timer-paths-'));
  await symlink(join(REPO_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'timers', private: true, type: 'module' }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Generates a machine from `spec` in the temporary project and imports it. */
async function machineOf(spec: Record<string, unknown>): Promise<AnyMachineDefinition> {
  const id = String(spec.id);
  await mkdir(join(dir, 'machines', id), { recursive: true });
  const specFile = join(dir, 'machines', id, `${id}.flow.json`);
  await writeFile(specFile, JSON.stringify(spec, null, 2));
  const codegen = createCodegen({ rootDir: dir });
  try {
    const result = await codegen.generate(specFile, { typeCheck: false });
    expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
  } finally {
    codegen.dispose();
  }
  const module = (await import(pathToFileURL(join(dir, 'machines', id, `${id}.machine.ts`)).href)) as Record<string, unknown>;
  return Object.values(module).find(
    (value) => (value as AnyMachineDefinition | undefined)?.id === id && 'specHash' in (value as object),
  ) as AnyMachineDefinition;
}

/**
 * A session that waits in `idle` for an ASK or expires after `delay` ms; once asked, it waits for CLOSE and reminds
 * after the same delay, where CLOSE still closes it.
 */
function timedSpec(id: string, delay: number) {
  return FlowSpecSchema.parse({
    specVersion: 1,
    id,
    context: { orderId: { type: 'string', optional: true } },
    events: { ASK: { orderId: { type: 'string' } }, CLOSE: {} },
    initial: 'idle',
    states: {
      idle: { on: { ASK: { target: 'asked', assign: { orderId: 'event.orderId' } } }, after: { [delay]: 'expired' } },
      asked: { on: { CLOSE: 'closed' }, after: { [delay]: 'reminded' } },
      reminded: { on: { CLOSE: 'closed' } },
      expired: { type: 'final' },
      closed: { type: 'final' },
    },
  });
}

describe('path tests of timers nobody interrupts', () => {
  for (const delay of [500, 1_000]) {
    it(`paths that wait for a ${delay} ms after timer (with no event at all, and between two events) follow the graph`, async () => {
      const machine = await machineOf(timedSpec(`timed-${delay}`, delay));
      const report = await testPaths(machine);
      expect(report.paths.filter((p) => !p.ok).map((p) => `${p.name}: ${p.problem}`)).toEqual([]);
      const byStates = report.paths.map((p) => p.states.join(' > '));
      // No event at all; a timer between two events.
      expect(byStates).toEqual(expect.arrayContaining(['idle > expired', 'idle > asked > reminded > closed']));
      expect(report.coverage.transitions.missed).toEqual([]);
      expect(report.ok).toBe(true);
    }, 60_000);
  }
});

describe('a recorded case whose session waited for a timer while quiet', () => {
  it('records the wait as a timer line, and the replay fires the timer on simulated time and passes', async () => {
    const machine = await machineOf(timedSpec('timed-50', 50));
    const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
    const session = await runtime.createSession(machine);
    await session.send({ type: 'ASK', orderId: 'A1' });
    await vi.waitFor(async () => expect((await session.snapshot()).state).toBe('reminded'), { timeout: 5_000, interval: 20 });
    await session.send({ type: 'CLOSE' });
    const file = parseCase(serializeCase(caseFromLog(await session.events(), await session.snapshot(), { name: 'reminded' })));
    expect(file.inputs).toEqual([
      { type: 'event', event: { type: 'ASK', orderId: 'A1' } },
      { type: 'timer', delay: '50' },
      { type: 'event', event: { type: 'CLOSE' } },
    ]);
    const result = await testCase(machine, file);
    expect(result.report).toEqual([]);
    expect(result.observation.steps.filter((step) => 'state' in step)).toEqual([
      { state: 'idle' },
      { state: 'asked' },
      { state: 'reminded' },
      { state: 'closed' },
    ]);
    expect(result.ok).toBe(true);
  }, 60_000);
});
