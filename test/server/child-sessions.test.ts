import { afterEach, describe, expect, it } from 'vitest';
import { childMachines } from '../helpers/child-machines.ts';
import { startTestServer, type TestServer } from './harness.ts';

describe('the session routes of a parent waiting on a child session', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  async function waitingDesk() {
    const machines = childMachines();
    server = await startTestServer([machines.desk, machines.billing]);
    const created = await server.call('POST', '/sessions', { body: { machine: 'desk' } });
    const id = created.body.sessionId as string;
    const sent = await server.call('POST', `/sessions/${id}/events`, { body: { type: 'START', orderId: 'A1' } });
    expect(sent.status).toBe(200);
    return { id, machines, server };
  }

  it("GET /sessions/:id names the child and the approval it waits for; the child's view names its parent", async () => {
    const { id, server } = await waitingDesk();
    const { status, body } = await server.call('GET', `/sessions/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'waiting',
      pendingApproval: null,
      invokedBy: null,
      waitingOn: {
        machineId: 'billing',
        state: 'billing',
        status: 'waiting',
        pendingApproval: { state: 'await_approval', tool: 'pay', args: { amount: 42 } },
        waitingOn: null,
      },
    });
    const child = await server.call('GET', `/sessions/${body.waitingOn.sessionId}`);
    expect(child.body.invokedBy).toMatchObject({ sessionId: id, state: 'billing', depth: 1 });
  });

  it('GET /sessions names the parent of a child session (parentId) and of no other session', async () => {
    const { id, server } = await waitingDesk();
    const { status, body } = await server.call('GET', '/sessions');
    expect(status).toBe(200);
    const lines = body.sessions.map((s: { sessionId: string; machineId: string; parentId?: string }) => [s.machineId, s.parentId]);
    expect(lines).toEqual(
      expect.arrayContaining([
        ['desk', undefined],
        ['billing', id],
      ]),
    );
    expect(lines).toHaveLength(2);
    expect(body.sessions.find((s: { machineId: string }) => s.machineId === 'desk')).not.toHaveProperty('parentId');
  });

  it("POST /sessions/:id/approve on the parent's id decides the child's approval (with its approvalId), and both finish", async () => {
    const { id, server, machines } = await waitingDesk();
    const view = (await server.call('GET', `/sessions/${id}`)).body;
    const approvalId = view.waitingOn.pendingApproval.approvalId as string;
    const approved = await server.call('POST', `/sessions/${id}/approve`, { body: { approvalId } });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ applied: true, forwardedTo: view.waitingOn.sessionId });
    expect((await server.call('GET', `/sessions/${id}`)).body).toMatchObject({ status: 'done', state: 'refunded', waitingOn: null });
    expect((await server.call('GET', `/sessions/${view.waitingOn.sessionId}`)).body.status).toBe('done');
    expect(machines.pay.paid).toEqual([{ amount: 42 }]);
  });
  it('POST /sessions/:id/approve on the parent after the child ended: a retry answers as the decision did, a new decision is refused naming the child', async () => {
    const { id, server, machines } = await waitingDesk();
    const view = (await server.call('GET', `/sessions/${id}`)).body;
    const childId = view.waitingOn.sessionId as string;
    const approvalId = view.waitingOn.pendingApproval.approvalId as string;
    const key = { 'idempotency-key': 'decide-1' };
    expect((await server.call('POST', `/sessions/${id}/approve`, { body: { approvalId }, headers: key })).status).toBe(200);
    // The same request again (same key and approvalId), and the same approvalId alone: the decision taken, once.
    const again = await server.call('POST', `/sessions/${id}/approve`, { body: { approvalId }, headers: key });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ applied: true, duplicate: true, forwardedTo: childId, status: 'done' });
    const sameApproval = await server.call('POST', `/sessions/${id}/approve`, { body: { approvalId } });
    expect(sameApproval.body).toMatchObject({ applied: true, duplicate: true, forwardedTo: childId });
    // Another decision: refused with the child named.
    const late = await server.call('POST', `/sessions/${id}/reject`, { body: {} });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'APPROVAL_ALREADY_DECIDED', details: { childId, approvalId, decision: 'approved' } });
    expect(late.body.message).toContain(`its child ${childId} (machine 'billing'`);
    expect(machines.pay.paid).toEqual([{ amount: 42 }]);
  });
});
