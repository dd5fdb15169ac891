import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineMigration,
  type AnyMachineDefinition,
  type AnyMigrationHook,
  type Runtime,
  type StaleSession,
} from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { editedMachine } from '../helpers/edited-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { createBackend } from '../helpers/stores.ts';

/** Points every transition (and any other mention) of a spec's states at `to` instead of state `from`. */
function retarget(spec: { states: unknown }, from: string, to: string): void {
  spec.states = JSON.parse(JSON.stringify(spec.states).replaceAll(`"${from}"`, `"${to}"`));
}

interface Edit {
  name: string;
  edit(spec: any): void;
  hook?: AnyMigrationHook;
  /** The sessions (by the state they wait in) listed as stale, with the reason code. */
  stale: Record<string, string>;
}

const EDITS: Edit[] = [
  {
    name: 'rename-state',
    edit(spec) {
      const states = spec.states.active.states;
      states.await_manager = states.await_approval;
      delete states.await_approval;
      retarget(spec, 'await_approval', 'await_manager');
    },
    hook: defineMigration({ states: { 'active.await_approval': 'active.await_manager' } }),
    stale: { await_approval: 'STALE_STATE_REMOVED' },
  },
  {
    name: 'remove-state',
    edit(spec) {
      delete spec.states.active.states.ask_order_id;
      retarget(spec, 'ask_order_id', 'order_not_found');
    },
    stale: { ask_order_id: 'STALE_STATE_REMOVED' },
  },
  {
    name: 'add-field',
    edit(spec) {
      spec.context.priority = { type: 'string', default: 'normal' };
    },
    stale: {},
  },
  {
    name: 'change-field-type',
    edit(spec) {
      spec.context.orderId = { type: 'number', optional: true };
    },
    // The sessions that have an order id by now: the refund waiting for approval and the order not found.
    stale: { await_approval: 'STALE_CONTEXT_INVALID', order_not_found: 'STALE_CONTEXT_INVALID' },
  },
  {
    name: 'edit-prompt',
    edit(spec) {
      spec.states.active.states.small_talk.invoke.prompt = 'Answer in one short sentence, then offer help: {{ context.lastMessage }}';
    },
    stale: {},
  },
];

/** One waiting session per waiting state of order-support, and the event that takes each one on. */
const SCENARIOS: Array<{ message?: string; state: string; next: { type: string; text?: string } }> = [
  { state: 'idle', next: { type: 'USER_MESSAGE', text: 'hello' } },
  { message: 'where is my order', state: 'ask_order_id', next: { type: 'USER_MESSAGE', text: 'no idea' } },
  { message: 'I want a refund for A1002', state: 'await_approval', next: { type: 'APPROVE' } },
  { message: 'where is my order Z9999', state: 'order_not_found', next: { type: 'USER_MESSAGE', text: 'no idea' } },
];

async function waitingSessions(runtime: Runtime) {
  const out: Array<{ id: string; state: string; next: { type: string } }> = [];
  for (const scenario of SCENARIOS) {
    const session = await runtime.createSession(orderSupport);
    if (scenario.message) await session.send({ type: 'USER_MESSAGE', text: scenario.message });
    const snapshot = await session.snapshot();
    expect(snapshot.status).toBe('waiting');
    expect(snapshot.state).toEqual({ active: scenario.state });
    out.push({ id: session.id, state: scenario.state, next: scenario.next });
  }
  return out;
}

const figures = { migrated: 0, stale: 0, stranded: 0 };
let project: Awaited<ReturnType<typeof copyProject>>;
const edited = new Map<string, AnyMachineDefinition>();

beforeAll(async () => {
  project = await copyProject('flowing-versions-');
  for (const edit of EDITS) edited.set(edit.name, (await editedMachine(project.dir, 'order-support', edit.name, edit.edit)).definition);
}, 60_000);

afterAll(async () => {
  await project?.remove();
  console.info(`versions: migrated ${figures.migrated}, listed stale ${figures.stale}, stranded ${figures.stranded}`);
});

describe.each(['memory', 'sqlite'] as const)('waiting sessions when the served machine changes (%s)', (kind) => {
  it.each(EDITS.map((edit) => [edit.name, edit] as const))(
    'after %s: continues each session that fits, lists each other one with its reason, strands none',
    async (_name, edit) => {
      const backend = await createBackend(kind);
      try {
        const before = createRuntime({ machines: [orderSupport], store: backend.open(), warmSessions: 0 });
        const sessions = await waitingSessions(before);
        const machine = edited.get(edit.name)!;
        expect(machine.specHash).not.toBe(orderSupport.specHash);
        const after = createRuntime({ machines: [machine], store: backend.open(), warmSessions: 0 });

        const stale = await after.staleSessions();
        const staleById = new Map<string, StaleSession>(stale.map((s) => [s.sessionId, s]));
        const expected = Object.entries(edit.stale);
        expect(stale.map((s) => s.stale.activeStates[0]!.split('.')[1]).sort()).toEqual(expected.map(([state]) => state).sort());
        for (const s of stale) {
          const state = s.stale.activeStates[0]!.split('.')[1]!;
          expect(s.stale.reasons.map((r) => r.code)).toContain(edit.stale[state]);
          expect(s.stale).toMatchObject({ fromVersion: orderSupport.specHash, toVersion: machine.specHash, migratable: false });
        }

        for (const session of sessions) {
          const handle = after.session(session.id);
          const listed = staleById.get(session.id);
          if (listed) {
            const stored = await backend.open().load(session.id);
            await expect(handle.send(session.next)).rejects.toMatchObject({
              code: 'SPEC_CHANGED',
              details: { reasons: [expect.objectContaining({ code: listed.stale.reasons[0]!.code })] },
            });
            expect(await backend.open().load(session.id)).toEqual(stored);
            figures.stale++;
            continue;
          }
          const result = await handle.send(session.next);
          if (!result.applied) figures.stranded++;
          expect(result, `${session.state} after ${edit.name}`).toMatchObject({ applied: true });
          const migrated = (await handle.events()).filter((e) => e.type === 'session.migrated');
          expect(migrated).toHaveLength(1);
          expect(migrated[0]!.data).toMatchObject({ fromVersion: orderSupport.specHash, toVersion: machine.specHash, hook: false });
          if (edit.name === 'add-field') expect((migrated[0]!.data as { context: { priority?: string } }).context.priority).toBe('normal');
          figures.migrated++;
        }
      } finally {
        await backend.remove();
      }
    },
  );

  it('carries a renamed state over with the machine hook, once, and the session goes on from there', async () => {
    const backend = await createBackend(kind);
    try {
      const before = createRuntime({ machines: [orderSupport], store: backend.open(), warmSessions: 0 });
      const refund = (await waitingSessions(before)).find((s) => s.state === 'await_approval')!;
      const rename = EDITS[0]!;
      const machine = edited.get(rename.name)!;
      const after = createRuntime({
        machines: [machine],
        store: backend.open(),
        warmSessions: 0,
        migrations: { 'order-support': rename.hook! },
      });
      expect((await after.staleSessions()).map((s) => [s.sessionId, s.stale.migratable])).toEqual([[refund.id, true]]);

      const dry = await after.migrate({ dryRun: true });
      expect(dry.migrated.map((m) => m.sessionId)).toContain(refund.id);
      expect((await after.session(refund.id).events()).some((e) => e.type === 'session.migrated')).toBe(false);

      const report = await after.migrate();
      expect(report.stale).toEqual([]);
      expect(report.failed).toEqual([]);
      expect(report.migrated.find((m) => m.sessionId === refund.id)).toMatchObject({
        hook: true,
        renamed: { 'active.await_approval': 'active.await_manager' },
      });
      expect(await after.staleSessions()).toEqual([]);
      expect((await after.migrate()).migrated).toEqual([]);

      const snapshot = await after.session(refund.id).snapshot();
      expect(snapshot.state).toEqual({ active: 'await_manager' });
      expect(snapshot.approval?.state).toBe('await_manager');
      const result = await after.session(refund.id).send({ type: 'APPROVE' });
      expect(result).toMatchObject({ applied: true });
      expect((await after.session(refund.id).snapshot()).context).toMatchObject({ refundId: expect.any(String) });
      const migrated = (await after.session(refund.id).events()).filter((e) => e.type === 'session.migrated');
      expect(migrated.map((e) => e.data)).toEqual([
        expect.objectContaining({
          fromVersion: orderSupport.specHash,
          toVersion: machine.specHash,
          hook: true,
          state: { active: 'await_manager' },
        }),
      ]);
      figures.migrated++;
    } finally {
      await backend.remove();
    }
  });
});
