import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SessionStore } from '@flowing/runtime';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createBackend, testEvents, testRecord, type StoreBackend } from '../helpers/stores.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

// The stores shared between processes have a live feed (memory has none).
describe.each(['sqlite', 'redis'] as const)('store feed: %s', (kind) => {
  let backend: StoreBackend;
  let store: SessionStore;
  beforeAll(async () => {
    backend = await createBackend(kind, redis);
    store = backend.open();
  });
  afterAll(async () => {
    await backend?.remove();
  });

  it('delivers each follower only the events after its own cursor when two followers of one session sit at different positions', async () => {
    const id = `feed-${kind}`;
    await store.commit({ expectedVersion: 0, record: testRecord(id, 1, 5), events: testEvents(id, 1, 5), journal: [] });
    const behind: number[] = [];
    const current: number[] = [];
    // The feed reads from the lower cursor (2), so it reads event 5 again: the follower already at 5 must not get it.
    const stopBehind = store.follow!(id, 2, (events) => behind.push(...events.map((e) => e.seq)));
    const stopCurrent = store.follow!(id, 5, (events) => current.push(...events.map((e) => e.seq)));
    try {
      await vi.waitFor(() => expect(behind).toEqual([3, 4, 5]), { timeout: 5_000 });
      await store.commit({ expectedVersion: 1, record: testRecord(id, 2, 6), events: testEvents(id, 6, 6), journal: [] });
      // Event 6 reaching both is the sign the feed is past every read that could have repeated event 5.
      await vi.waitFor(() => expect(current).toContain(6), { timeout: 5_000 });
      await vi.waitFor(() => expect(behind).toContain(6), { timeout: 5_000 });
      expect(current).toEqual([6]);
      expect(behind).toEqual([3, 4, 5, 6]);
    } finally {
      stopBehind();
      stopCurrent();
    }
  });
});
