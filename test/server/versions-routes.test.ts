import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, type AnyMachineDefinition } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { editedMachine } from '../helpers/edited-machines.ts';
import { copyProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from './harness.ts';

let project: Awaited<ReturnType<typeof copyProject>>;
let withoutAsk: AnyMachineDefinition;
let server: TestServer;
const ids = { idle: '', ask: '' };

beforeAll(async () => {
  project = await copyProject('flowing-versions-routes-');
  withoutAsk = (
    await editedMachine(project.dir, 'order-support', 'without-ask', (spec) => {
      delete spec.states.active.states.ask_order_id;
      const json = JSON.stringify(spec.states).replaceAll('"ask_order_id"', '"order_not_found"');
      spec.states = JSON.parse(json);
    })
  ).definition;
  const store = createMemoryStore();
  const before = createRuntime({ machines: [orderSupport], store, warmSessions: 0 });
  ids.idle = (await before.createSession(orderSupport)).id;
  const asking = await before.createSession(orderSupport);
  await asking.send({ type: 'USER_MESSAGE', text: 'where is my order' });
  ids.ask = asking.id;
  server = await startTestServer([withoutAsk], { runtime: { store, warmSessions: 0 } });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await project?.remove();
});

describe('the runtime server and machine versions', () => {
  it('counts the sessions still taking events by active state: GET /machines/:id/states', async () => {
    const counts = await server.call('GET', '/machines/order-support/states');
    expect(counts.status).toBe(200);
    expect(counts.body).toEqual({
      machineId: 'order-support',
      specHash: withoutAsk.specHash,
      states: { 'active.idle': 1, 'active.ask_order_id': 1 },
    });
    expect((await server.call('GET', '/machines/no-such-machine/states')).body).toMatchObject({ code: 'UNKNOWN_MACHINE' });
  });

  it('lists the session waiting in a removed state with its reason: GET /sessions?stale=true', async () => {
    const listed = await server.call('GET', '/sessions?stale=true');
    expect(listed.status).toBe(200);
    expect(listed.body.sessions).toEqual([
      expect.objectContaining({
        sessionId: ids.ask,
        stale: expect.objectContaining({
          fromVersion: orderSupport.specHash,
          toVersion: withoutAsk.specHash,
          activeStates: ['active.ask_order_id'],
          reasons: [expect.objectContaining({ code: 'STALE_STATE_REMOVED', state: 'active.ask_order_id' })],
          migratable: false,
        }),
      }),
    ]);
  });

  it('refuses an event to the stale session with 409 SPEC_CHANGED and continues the other one on the new version', async () => {
    const refused = await server.call('POST', `/sessions/${ids.ask}/events`, { body: { type: 'USER_MESSAGE', text: 'A1001' } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'SPEC_CHANGED', details: { reasons: [{ code: 'STALE_STATE_REMOVED' }] } });
    expect((await server.call('GET', `/sessions/${ids.ask}`)).body.specHash).toBe(orderSupport.specHash);

    const applied = await server.call('POST', `/sessions/${ids.idle}/events`, { body: { type: 'USER_MESSAGE', text: 'hello' } });
    expect(applied.status).toBe(200);
    const log = (await server.call('GET', `/sessions/${ids.idle}/events`)).body.events;
    expect(log.filter((e: { type: string }) => e.type === 'session.migrated')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ fromVersion: orderSupport.specHash, toVersion: withoutAsk.specHash }) }),
    ]);
    expect((await server.call('GET', `/sessions/${ids.idle}`)).body.specHash).toBe(withoutAsk.specHash);
  });
});
