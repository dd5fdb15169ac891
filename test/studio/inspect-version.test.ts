// The inspector shows the version a session ran under at the viewed event, and what a migration changed.
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { summarize, versionAt } from '../../studio/src/inspect/event-summary.ts';

describe('the version of a session in the inspector', () => {
  it('reads the version a log was recorded under, and the new one from session.migrated on', async () => {
    const store = createMemoryStore();
    const before = createRuntime({ machines: [orderSupport], store, warmSessions: 0 });
    const session = await before.createSession(orderSupport);
    const next = { ...orderSupport, specHash: 'b'.repeat(64) };
    await createRuntime({ machines: [next], store })
      .session(session.id)
      .send({ type: 'USER_MESSAGE', text: 'hello' });
    const events = await store.readEvents(session.id, 0);
    const at = events.findIndex((e) => e.type === 'session.migrated');
    expect(versionAt(events, 0)).toEqual({ version: orderSupport.specHash });
    expect(versionAt(events, at - 1)).toEqual({ version: orderSupport.specHash });
    expect(versionAt(events, at)).toEqual({ version: next.specHash, migratedFrom: orderSupport.specHash });
    expect(versionAt(events, events.length - 1)).toEqual({ version: next.specHash, migratedFrom: orderSupport.specHash });
    expect(summarize(events[at]!)).toBe(`version ${orderSupport.specHash.slice(0, 12)} → bbbbbbbbbbbb, now in active.idle`);
  });
});
