import { describe, expect, it } from 'vitest';
import { parseSessionFile, type RuntimeEvent } from '@flowing/protocol';
import { createMemoryStore, createRuntime, exportSessionStream, type SessionRecord, type SessionStore } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

/** A memory store that remembers the `limit` of every `readEvents` (Infinity when none was given). */
function readCountingStore(): { store: SessionStore; reads: number[] } {
  const inner = createMemoryStore();
  const reads: number[] = [];
  const store: SessionStore = {
    ...inner,
    readEvents(sessionId, afterSeq, limit) {
      reads.push(limit ?? Number.POSITIVE_INFINITY);
      return inner.readEvents(sessionId, afterSeq, limit);
    },
  };
  return { store, reads };
}

/** An order-support session whose log holds at least `count` events: one real turn, written again with later seqs. */
async function longSession(store: SessionStore, count: number): Promise<string> {
  const runtime = createRuntime({ machines: [orderSupport], store });
  const session = await runtime.createSession(orderSupport);
  const first = (await store.load(session.id))!.seq;
  await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
  let record: SessionRecord = (await store.load(session.id))!;
  const turn = (await store.readEvents(session.id, first)).filter((e) => e.seq > first);
  while (record.seq < count) {
    const events: RuntimeEvent[] = turn.map((event, i) => ({ ...event, seq: record.seq + i + 1 }));
    const next = { ...record, version: record.version + 1, seq: record.seq + events.length };
    await store.commit({ expectedVersion: record.version, record: next, events, journal: [] });
    record = next;
  }
  return session.id;
}

describe('reading a long log a page at a time', () => {
  it('exports a session reading one page of its log per piece, when the piece is taken', async () => {
    const { store, reads } = readCountingStore();
    const id = await longSession(store, 1_200);
    reads.length = 0;
    const file = await exportSessionStream(store, id, { now: 0 });
    expect(reads).toEqual([]);
    const iterator = file.chunks[Symbol.asyncIterator]();
    await iterator.next(); // the header
    await iterator.next(); // the first page of events
    expect(reads).toEqual([256]);
    for (let next = await iterator.next(); !next.done; next = await iterator.next());
    expect(Math.max(...reads)).toBe(256);
    expect(reads.length).toBeGreaterThanOrEqual(Math.ceil(1_200 / 256));
    // What the pieces make is the session file, whole.
    let all = '';
    for await (const piece of (await exportSessionStream(store, id, { now: 0 })).chunks) all += piece;
    expect(parseSessionFile(all).events).toEqual(await store.readEvents(id));
  });

  it('delivers a subscription from the start of a long log page by page, every event once and in order', async () => {
    const { store, reads } = readCountingStore();
    const id = await longSession(store, 1_200);
    const runtime = createRuntime({ machines: [orderSupport], store });
    const last = (await store.load(id))!.seq;
    reads.length = 0;
    const seen: number[] = [];
    await new Promise<void>((resolve) => {
      const stop = runtime.session(id).subscribe(0, (event) => {
        seen.push(event.seq);
        if (event.seq === last) {
          stop();
          resolve();
        }
      });
    });
    expect(seen).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect(Math.max(...reads)).toBeLessThanOrEqual(500);
  });

  it('answers GET /sessions/:id/export and /at/:seq from a log read in pages', async () => {
    const { store, reads } = readCountingStore();
    const id = await longSession(store, 1_200);
    const runtime = createRuntime({ machines: [orderSupport], store });
    const server = await startServer(runtime, { port: 0, log: () => {} });
    try {
      reads.length = 0;
      const exported = await fetch(`${server.url}/sessions/${id}/export`);
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
      const file = parseSessionFile(await exported.text());
      expect(file.events).toHaveLength((await store.load(id))!.seq);
      const at = await (await fetch(`${server.url}/sessions/${id}/at/1000`)).json();
      expect(at).toMatchObject({ seq: 1000, event: { seq: 1000 } });
      expect(Math.max(...reads)).toBeLessThanOrEqual(256);
    } finally {
      await server.close();
    }
  });
});
