import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCase, testCase } from '@flowing/runtime/testing';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { startTestServer, type TestServer } from '../server/harness.ts';
import { totalCalls, withCountingTools } from './edited-machine.ts';

describe('GET /sessions/:id/case', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer([orderSupport as never]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers a served session as a case file that replays cleanly against the machine', async () => {
    const created = await server.call('POST', '/sessions', { body: { machine: 'order-support' } });
    expect(created.status).toBe(201);
    const id = created.body.sessionId as string;
    expect(
      (await server.call('POST', `/sessions/${id}/events`, { body: { type: 'USER_MESSAGE', text: 'refund for order A1002 please' } }))
        .status,
    ).toBe(200);
    expect((await server.call('POST', `/sessions/${id}/events`, { body: { type: 'REJECT', reason: 'used item' } })).status).toBe(200);

    const response = await fetch(`${server.url}/sessions/${id}/case?name=served-refund&context=reply,intent`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="served-refund.case.jsonl"');
    const file = parseCase(await response.text(), 'served-refund');
    expect(file.header).toMatchObject({
      machineId: 'order-support',
      name: 'served-refund',
      source: 'service',
      specHash: orderSupport.specHash,
    });
    expect(file.inputs.map((i) => (i.type === 'event' ? i.event.type : i.type))).toEqual(['USER_MESSAGE', 'REJECT']);
    expect(file.expect.context).toEqual({ reply: 'The refund was not approved: used item', intent: 'refund' });

    const { machine, calls } = withCountingTools(orderSupport as never);
    const result = await testCase(machine, file);
    expect(result.report).toEqual([]);
    expect(totalCalls(calls)).toBe(0);
  });

  it('refuses a case name that is not a plain file name, and an unknown session, with codes', async () => {
    const created = await server.call('POST', '/sessions', { body: { machine: 'order-support' } });
    const bad = await server.call('GET', `/sessions/${created.body.sessionId}/case?name=..%2Fx`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('SERVER_BAD_REQUEST');
    const missing = await server.call('GET', '/sessions/no-such-session/case');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('SESSION_NOT_FOUND');
  });
});
