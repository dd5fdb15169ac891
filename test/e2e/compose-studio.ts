import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { createRuntime, createXStateTrace, type AnyMachineDefinition, type Clock, type Runtime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { validateSpec, type FlowSpec, type FlowSpecInput } from '@flowing/spec';
import { startStudio } from '@flowing/studio/server';
import { generate } from '../../codegen/index.ts';
import { checkCase } from '../../bin/studio/case-checker.ts';
import { copyProject } from '../helpers/project.ts';

/**
 * `desk` starts a child session of `billing` (which waits for APPROVE) and, on START, sends `ledger.note` to the
 * `ledger` machine (which listens to `ledger.*`, one session per order id).
 */
export const COMPOSE_SPECS: Record<'desk' | 'billing' | 'ledger', FlowSpecInput> = {
  desk: {
    specVersion: 1,
    id: 'desk',
    context: { orderId: { type: 'string', default: '' }, approved: { type: 'boolean', optional: true } },
    events: { START: { orderId: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: {
        on: {
          START: {
            target: 'billing',
            assign: { orderId: 'event.orderId' },
            emit: [{ channel: 'ledger.note', key: 'event.orderId', data: { orderId: 'event.orderId' } }],
          },
        },
      },
      billing: {
        invoke: {
          machine: 'billing',
          input: { orderId: 'context.orderId' },
          onDone: { target: 'done', assign: { approved: 'output.approved' } },
          onError: 'failed',
        },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
  },
  billing: {
    specVersion: 1,
    id: 'billing',
    context: { orderId: { type: 'string', default: '' } },
    output: { approved: { type: 'boolean' } },
    events: { APPROVE: {}, REJECT: {} },
    initial: 'await_approval',
    states: {
      await_approval: { tags: ['human'], on: { APPROVE: 'paid', REJECT: 'declined' } },
      paid: { type: 'final', output: { approved: 'true' } },
      declined: { type: 'final', output: { approved: 'false' } },
    },
  },
  ledger: {
    specVersion: 1,
    id: 'ledger',
    channels: { listen: ['ledger.*'], key: 'orderId' },
    context: { orderId: { type: 'string', default: '' }, notes: { type: 'number', default: 0 } },
    events: { LEDGER_NOTE: { orderId: { type: 'string' } } },
    initial: 'open',
    states: { open: { on: { LEDGER_NOTE: { target: 'open', assign: { notes: 'context.notes + 1' } } } } },
  },
};

/** The runtime's clock, moved on by hand between the steps of a test so that each step has its own time. */
export function steppedClock(): Clock & { step(ms: number): void } {
  let skew = 0;
  return {
    now: () => Date.now() + skew,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
    step(ms) {
      skew += ms;
    },
  };
}

export interface ComposeStudio {
  url: string;
  rootDir: string;
  runtime: Runtime;
  clock: ReturnType<typeof steppedClock>;
  close(): Promise<void>;
}

/**
 * The studio over a copy of the project with `desk`, `billing` and `ledger` in machines/ (generated there, as
 * `flowing codegen` would), and a runtime serving the three on a SQLite store under /api/runtime.
 */
export async function startComposeStudio(): Promise<ComposeStudio> {
  const copy = await copyProject('flowing-compose-');
  const specs: Record<string, FlowSpec> = {};
  for (const [id, input] of Object.entries(COMPOSE_SPECS)) {
    const { spec, problems } = validateSpec(input);
    if (!spec) throw new Error(`${id}: ${problems.map((p) => p.message).join('; ')}`);
    specs[id] = spec;
  }
  for (const spec of Object.values(specs)) {
    await mkdir(join(copy.dir, 'machines', spec.id), { recursive: true });
    await writeFile(
      join(copy.dir, 'machines', spec.id, `${spec.id}.flow.json`),
      `${JSON.stringify(COMPOSE_SPECS[spec.id as 'desk'], null, 2)}\n`,
    );
    for (const file of generate(spec, { machines: specs })) await writeFile(join(copy.dir, file.path), file.text);
  }
  const machines: AnyMachineDefinition[] = [];
  for (const id of Object.keys(specs)) machines.push((await import(join(copy.dir, 'machines', id, `${id}.machine.ts`)))[id]);
  const clock = steppedClock();
  const store: SqliteStore = createSqliteStore({ projectDir: copy.dir });
  const xstateTrace = createXStateTrace(); // as `flowing studio` mounts its runtime
  const runtime = createRuntime({ machines, store, clock, inspect: xstateTrace.inspect });
  const app = createServer(runtime, { specs, xstateTrace, rateLimit: { client: false, session: false }, log: () => {} });
  const studio = await startStudio({
    rootDir: copy.dir,
    appDir: inject('studioAppDir'),
    port: 0,
    host: '127.0.0.1',
    runtimeApp: { fetch: app.fetch, close: async () => app.dispose() },
    checkCase,
  });
  return {
    url: studio.url,
    rootDir: copy.dir,
    runtime,
    clock,
    async close() {
      await studio.close();
      await store.close();
      await copy.remove();
    },
  };
}
