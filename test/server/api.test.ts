import { afterEach, describe, expect, it } from 'vitest';
import { approvalMachine, gateTool, refusalMachine } from '../helpers/runtime-machines.ts';
import { within } from '../helpers/wait.ts';
import { abortableTool, payTool, startTestServer, type TestServer } from './harness.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('runtime server: sessions over HTTP', () => {
  it('lists the served machines with their declared events', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { status, body } = await server.call('GET', '/machines');
    expect(status).toBe(200);
    expect(body.machines).toEqual([expect.objectContaining({ id: 'refusals', events: ['GO', 'PING', 'FINISH'] })]);
  });

  it('creates a session and answers its status, active states, context, pending approval and usage', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const created = await server.call('POST', '/sessions', { body: { machine: 'refusals', input: { n: 3 } } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/sessions/${created.body.sessionId}`);
    const { status, body } = await server.call('GET', `/sessions/${created.body.sessionId}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      machineId: 'refusals',
      status: 'waiting',
      activeStates: ['idle'],
      pendingApproval: null,
      usage: { promptTokens: 0, completionTokens: 0 },
    });
    expect(body.context).toEqual({ n: 0 });
  });

  it('refuses a session input that does not match the context fields with 422 SERVER_INVALID_INPUT and stores nothing', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { status, body } = await server.call('POST', '/sessions', { body: { machine: 'refusals', input: { n: 'three' } } });
    expect(status).toBe(422);
    expect(body.code).toBe('SERVER_INVALID_INPUT');
    expect(body.details.issues[0].path).toEqual(['n']);
    expect((await server.runtime.store.listSessions()).sessions).toEqual([]);
  });

  it('answers 404 UNKNOWN_MACHINE for a machine it does not serve', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { status, body } = await server.call('POST', '/sessions', { body: { machine: 'nope' } });
    expect(status).toBe(404);
    expect(body.code).toBe('UNKNOWN_MACHINE');
  });

  it('refuses a second session with the same requested id with 409 SESSION_EXISTS', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    expect((await server.call('POST', '/sessions', { body: { machine: 'refusals', sessionId: 'abc' } })).status).toBe(201);
    const again = await server.call('POST', '/sessions', { body: { machine: 'refusals', sessionId: 'abc' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('SESSION_EXISTS');
  });

  it('answers an applied event with the SendResult', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const { status, body } = await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'FINISH' } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ applied: true, status: 'done', state: 'done' });
    expect(body.events.map((e: { type: string }) => e.type)).toEqual(['state.changed', 'session.done']);
  });

  it.each([
    [{ type: 'NOPE' }, 422, 'UNKNOWN_EVENT'],
    [{ type: 'GO', n: 'x' }, 422, 'INVALID_PAYLOAD'],
    [{ type: 'PING' }, 409, 'NO_TRANSITION'],
    [{ type: 'GO', n: 0 }, 409, 'GUARD_REJECTED'],
  ])('answers the refusal of %j with %i and the code %s', async (event, status, code) => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const answer = await server.call('POST', `/sessions/${created.sessionId}/events`, { body: event });
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ applied: false, code });
  });

  it('answers an event to a finished session with 409 SESSION_FINISHED', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'FINISH' } });
    const answer = await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'FINISH' } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('SESSION_FINISHED');
  });

  it('lists sessions filtered by machine and status, with cursor paging', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool), approvalMachine(payTool().tool)]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await server.call('POST', '/sessions', { body: { machine: 'refusals' } })).body.sessionId);
    await server.call('POST', '/sessions', { body: { machine: 'approvals' } });
    await server.call('POST', `/sessions/${ids[0]}/events`, { body: { type: 'FINISH' } });

    const waiting = await server.call('GET', '/sessions?machine=refusals&status=waiting');
    expect(waiting.body.sessions.map((s: { sessionId: string }) => s.sessionId).sort()).toEqual(ids.slice(1).sort());
    const done = await server.call('GET', '/sessions?status=done');
    expect(done.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([ids[0]]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await server.call('GET', `/sessions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.sessions.map((s: { sessionId: string }) => s.sessionId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(6);
  });

  it('refuses an unknown status filter and a forged cursor with 400', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    expect((await server.call('GET', '/sessions?status=sleeping')).body.code).toBe('SERVER_BAD_REQUEST');
    const forged = await server.call('GET', '/sessions?cursor=not-a-cursor');
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('STORE_BAD_CURSOR');
  });

  it('pages through the event log with ?after= and ?limit=', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    for (let i = 0; i < 4; i++) await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'PING' } });
    const first = await server.call('GET', `/sessions/${created.sessionId}/events?limit=3`);
    expect(first.body.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3]);
    expect(first.body.nextAfter).toBe(3);
    const rest = await server.call('GET', `/sessions/${created.sessionId}/events?after=3`);
    expect(rest.body.events.map((e: { seq: number }) => e.seq)).toEqual([4, 5, 6]);
    expect(rest.body.nextAfter).toBeUndefined();
  });

  it('cancels a session and aborts its in-flight call within 100 ms', async () => {
    const wait = abortableTool();
    server = await startTestServer([refusalMachine(wait.tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const sending = server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'GO', n: 1 } });
    await within(wait.started, 2_000, 'the call to start');
    expect(wait.state.calls).toBe(1);
    const cancelAt = performance.now();
    const cancelled = await server.call('POST', `/sessions/${created.sessionId}/cancel`, { body: { reason: 'test' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(wait.state.abortedAt).toBeDefined();
    expect(wait.state.abortedAt! - cancelAt).toBeLessThan(100);
    const sent = await sending;
    expect(sent.body.applied === false || sent.body.status === 'cancelled').toBe(true);
  });

  it('escapes control, line-separator and bidi characters of an event type in the refusal message, as the CLI prints them', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const type = 'PAY\u202Egnp.exe\u2028\u001b[31m\u0085';
    const refused = await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('UNKNOWN_EVENT');
    expect(refused.body.message).toContain(String.raw`'PAY\u202egnp.exe\u2028\u001b[31m\u0085'`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must be absent
    expect(refused.body.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    const logged = (await server.store.readEvents(created.sessionId)).at(-1)!;
    expect(logged.data).toMatchObject({ event: type, reason: refused.body.message });
  });

  it('refuses to cancel a finished session with 409 and logs nothing: done (SESSION_FINISHED), cancelled (SESSION_CANCELLED)', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: done } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    await server.call('POST', `/sessions/${done.sessionId}/events`, { body: { type: 'FINISH' } });
    const { body: cancelled } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    expect((await server.call('POST', `/sessions/${cancelled.sessionId}/cancel`, { body: {} })).status).toBe(200);
    for (const [id, code, status] of [
      [done.sessionId, 'SESSION_FINISHED', 'done'],
      [cancelled.sessionId, 'SESSION_CANCELLED', 'cancelled'],
    ]) {
      const before = await server.store.readEvents(id);
      const answer = await server.call('POST', `/sessions/${id}/cancel`, { body: { reason: 'again' } });
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe(code);
      expect(answer.body.message).toContain(`session ${id} cannot be cancelled`);
      expect(await server.store.readEvents(id)).toEqual(before);
      expect((await server.call('GET', `/sessions/${id}`)).body.status).toBe(status);
    }
  });

  it('takes an Idempotency-Key: a retried POST answers the first result marked duplicate and applies nothing; another body is 409', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'refusals' } });
    const path = `/sessions/${created.sessionId}/events`;
    const headers = { 'idempotency-key': 'finish-1' };
    const first = await server.call('POST', path, { body: { type: 'FINISH' }, headers });
    expect(first.status).toBe(200);
    const logged = (await server.store.readEvents(created.sessionId)).length;
    const again = await server.call('POST', path, { body: { type: 'FINISH' }, headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    const other = await server.call('POST', path, { body: { type: 'PING' }, headers });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const bad = await server.call('POST', path, { body: { type: 'PING' }, headers: { 'idempotency-key': 'x'.repeat(200) } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_EVENT_ID');
    expect((await server.store.readEvents(created.sessionId)).length).toBe(logged);
  });

  it('D3: approves the pending approval once: the high-risk tool runs once, and a repeated approve (at once or later) answers as a duplicate', async () => {
    const pay = payTool();
    server = await startTestServer([approvalMachine(pay.tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'approvals' } });
    await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'REQUEST', amount: 25 } });
    const view = await server.call('GET', `/sessions/${created.sessionId}`);
    expect(view.body.pendingApproval).toMatchObject({ tool: 'pay', args: { amount: 25 } });
    const approvalId = view.body.pendingApproval.approvalId;

    const [a, b] = await Promise.all([
      server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId } }),
      server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId } }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.duplicate, b.body.duplicate].sort()).toEqual([true, undefined]);
    const repeat = await server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId } });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({
      applied: true,
      duplicate: true,
      events: [{ type: 'approval.decided', data: { approvalId, decision: 'approved' } }],
    });
    expect(pay.ledger).toEqual([25]);
    expect((await server.call('GET', `/sessions/${created.sessionId}`)).body.context.paid).toBe('r-1');
    // The opposite decision, or an approve without the approvalId, is no repeat: there is nothing to decide.
    expect((await server.call('POST', `/sessions/${created.sessionId}/reject`, { body: { approvalId } })).body.code).toBe(
      'NO_PENDING_APPROVAL',
    );
    expect((await server.call('POST', `/sessions/${created.sessionId}/approve`, { body: {} })).body.code).toBe('NO_PENDING_APPROVAL');
    expect(pay.ledger).toEqual([25]);
  });

  it('refuses an approval that names another request with 409 NO_PENDING_APPROVAL and runs nothing', async () => {
    const pay = payTool();
    server = await startTestServer([approvalMachine(pay.tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'approvals' } });
    await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'REQUEST', amount: 25 } });
    const answer = await server.call('POST', `/sessions/${created.sessionId}/approve`, { body: { approvalId: 'someone-else' } });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('NO_PENDING_APPROVAL');
    expect(pay.ledger).toEqual([]);
  });

  it('rejects the pending approval with a reason: the tool never runs', async () => {
    const pay = payTool();
    server = await startTestServer([approvalMachine(pay.tool)]);
    const { body: created } = await server.call('POST', '/sessions', { body: { machine: 'approvals' } });
    await server.call('POST', `/sessions/${created.sessionId}/events`, { body: { type: 'REQUEST', amount: 25 } });
    const answer = await server.call('POST', `/sessions/${created.sessionId}/reject`, { body: { reason: 'too much' } });
    expect(answer.status).toBe(200);
    expect(answer.body.state).toBe('idle');
    const decided = answer.body.events.find((e: { type: string }) => e.type === 'approval.decided');
    expect(decided.data).toMatchObject({ decision: 'rejected', reason: 'too much' });
    expect(pay.ledger).toEqual([]);
  });

  it('answers /healthz and /readyz', async () => {
    server = await startTestServer([refusalMachine(gateTool().tool)]);
    expect((await server.call('GET', '/healthz')).body).toEqual({ ok: true });
    expect((await server.call('GET', '/readyz')).body).toEqual({
      ok: true,
      store: 'memory',
      durability: 'memory store: sessions live in this process only and are lost when it ends',
    });
  });
});
