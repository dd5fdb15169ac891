import { describe, expect, it } from 'vitest';
import { createSessionFileReader, parseSessionFile, type RuntimeEvent } from '@flowing/protocol';
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

describe('reading a session file a piece at a time (createSessionFileReader)', () => {
  /** What parsing `text` gives, whole or fed in pieces of `size` characters: the file's counts, or the refusal. */
  function outcome(text: string, size?: number): unknown {
    try {
      let file;
      if (size === undefined) file = parseSessionFile(text);
      else {
        const reader = createSessionFileReader();
        for (let at = 0; at < text.length; at += size) reader.push(text.slice(at, at + size));
        file = reader.end();
      }
      return { events: file.events.length, journal: file.journal.length, last: file.events.at(-1) };
    } catch (error) {
      return {
        code: (error as { code?: string }).code,
        details: (error as { details?: unknown }).details,
        message: (error as Error).message,
      };
    }
  }

  it('reads an export and refuses a damaged one exactly as parseSessionFile does, wherever the pieces are cut', async () => {
    const store = createMemoryStore();
    const id = await longSession(store, 60);
    let text = '';
    for await (const piece of (await exportSessionStream(store, id, { now: 0 })).chunks) text += piece;
    const lines = text.trimEnd().split('\n');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    const variants = [
      text,
      `${text}\n\n  \n`,
      text.replace(/\n/g, '\r\n'),
      text.slice(0, text.length - 30),
      [lines[0], ...lines.slice(2)].join('\n'),
      [lines[0], lines[1], '', ...lines.slice(2)].join('\n'),
      `${JSON.stringify(header, null, 2)}\n`,
      `${JSON.stringify({ ...header, events: 0, journal: 0 })}\n`,
      '',
      '\n\n',
      'not json\n{}',
    ];
    for (const variant of variants) {
      const whole = outcome(variant);
      for (const size of [1, 7, 100, 4096])
        expect(outcome(variant, size), `pieces of ${size} of ${JSON.stringify(variant.slice(0, 40))}`).toEqual(whole);
    }
    // What each refusal is (as parseSessionFile refused them when it read the text whole).
    expect(outcome(text)).toMatchObject({ events: (await store.load(id))!.seq });
    expect(outcome(variants[1]!)).toEqual(outcome(text));
    expect(outcome(variants[2]!)).toEqual(outcome(text));
    expect(outcome(variants[3]!)).toMatchObject({ details: { line: lines.length, reason: 'truncated' } });
    expect(outcome(variants[4]!)).toMatchObject({ details: { line: 2, reason: 'seq_gap' } });
    expect(outcome(variants[5]!)).toMatchObject({ details: { line: 3, reason: 'not_json' } });
    expect(outcome(variants[6]!)).toMatchObject({
      details: { line: 1, reason: 'wrong_kind' },
      message: expect.stringContaining('several lines'),
    });
    expect(outcome(variants[7]!)).toMatchObject({ details: { line: 2, reason: 'truncated' } });
    expect(outcome(variants[8]!)).toMatchObject({ details: { line: 1, reason: 'empty' } });
    expect(outcome(variants[9]!)).toMatchObject({ details: { line: 1, reason: 'empty' } });
    expect(outcome(variants[10]!)).toMatchObject({ details: { line: 1, reason: 'not_json' } });
  });
});
