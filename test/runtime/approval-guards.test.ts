import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { leakyApprovalMachine, payTool } from '../helpers/runtime-approvals.ts';

async function start() {
  const { tool, paid } = payTool();
  const machine = leakyApprovalMachine(tool);
  const runtime = createRuntime({ machines: [machine], store: createMemoryStore() });
  const session = await runtime.createSession(machine);
  return { session, paid };
}

describe('an approval covers one payment of exactly the approved arguments (issue 8)', () => {
  it('pays once per APPROVE: a second entry into the paying state without a new approval is refused', async () => {
    const { session, paid } = await start();
    await session.send({ type: 'REQUEST', amount: 25 });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([{ amount: 25 }]);
    expect(await session.send({ type: 'PAY_AGAIN' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([{ amount: 25 }]);
    expect((await session.snapshot()).context).toMatchObject({ error: 'APPROVAL_REQUIRED' });
    expect((await session.snapshot()).approval).toMatchObject({ decision: 'approved', consumed: true, args: { amount: 25 } });
  });

  it('never pays arguments other than the approved ones: approved for 25, amended to 9999, nothing is paid', async () => {
    const { session, paid } = await start();
    await session.send({ type: 'REQUEST', amount: 25 });
    await session.send({ type: 'AMEND', amount: 9999 });
    expect(await session.send({ type: 'APPROVE' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([]);
    expect((await session.snapshot()).context).toMatchObject({ amount: 9999, error: 'APPROVAL_REQUIRED' });
    const failed = (await session.events()).find((e) => e.type === 'tool.failed');
    expect(failed?.data).toMatchObject({ tool: 'pay', error: { code: 'APPROVAL_REQUIRED' } });
  });

  it('still pays the approved arguments when the amendment puts them back before APPROVE', async () => {
    const { session, paid } = await start();
    await session.send({ type: 'REQUEST', amount: 25 });
    await session.send({ type: 'AMEND', amount: 9999 });
    await session.send({ type: 'AMEND', amount: 25 });
    await session.send({ type: 'APPROVE' });
    expect(paid).toEqual([{ amount: 25 }]);
  });

  it('never pays after a REJECT: a path from the rejection into the paying state fails the call with APPROVAL_REJECTED', async () => {
    const { session, paid } = await start();
    await session.send({ type: 'REQUEST', amount: 25 });
    expect(await session.send({ type: 'REJECT' })).toMatchObject({ applied: true, state: 'idle' });
    expect((await session.snapshot()).approval).toMatchObject({ decision: 'rejected', args: { amount: 25 } });
    // PAY_AGAIN is the REJECT path that reaches `paying`: a rejection read as an approval would pay here.
    expect(await session.send({ type: 'PAY_AGAIN' })).toMatchObject({ applied: true, state: 'idle' });
    expect(paid).toEqual([]);
    expect((await session.snapshot()).context).toMatchObject({ error: 'APPROVAL_REJECTED' });
    const failed = (await session.events()).find((e) => e.type === 'tool.failed');
    expect(failed?.data).toMatchObject({ tool: 'pay', error: { code: 'APPROVAL_REJECTED' } });
  });
});
