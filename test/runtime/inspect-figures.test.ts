import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createRuntime,
  exportSession,
  parseSessionFile,
  replaySession,
  sessionAt,
  type AnyMachineDefinition,
  type RuntimeEvent,
} from '@flowing/runtime';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { createVirtualClock } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';

/**
 * Figures of inspection on a session of more than 10,000 events (order questions answered with tools and the model,
 * on SQLite): export, parse, the state at an event, a full side-effect-free replay. The bounds are loose (a shared
 * 2-core machine); the figures are printed for the record.
 */
let dir: string;
let store: SqliteStore;
let sessionId: string;
let log: readonly RuntimeEvent[];
const figures: Record<string, number> = {};

const time = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
  const started = performance.now();
  const result = await fn();
  figures[name] = Math.round((performance.now() - started) * 10) / 10;
  return result;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-figures-'));
  store = createSqliteStore({ file: join(dir, 'sessions.db') });
  // Recorded in memory (fast), then stored on SQLite in one commit: the reads below are what is measured.
  const memory = createMemoryStore();
  const runtime = createRuntime({ machines: [orderSupport], store: memory, clock: createVirtualClock(), limits: { maxSteps: 100_000 } });
  const session = await runtime.createSession(orderSupport, { userId: 'u-ada' }, { sessionId: 'figures-1', traceId: 'trace-figures' });
  while ((await session.snapshot()).seq < 10_000) await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
  sessionId = session.id;
  const record = (await memory.load(sessionId))!;
  await store.commit({
    expectedVersion: 0,
    record: { ...record, version: 1 },
    events: await memory.readEvents(sessionId, 0),
    journal: await memory.readJournal(sessionId),
  });
  log = await store.readEvents(sessionId, 0);
}, 120_000);

afterAll(async () => {
  console.log(`inspection figures (${log.length} events):`, JSON.stringify(figures));
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe(`inspection of a session of more than 10,000 events`, () => {
  it('exports, parses and folds it within bounds, and replays it calling no tool', async () => {
    expect(log.length).toBeGreaterThanOrEqual(10_000);
    const text = await time('exportMs', () => exportSession(store, sessionId));
    figures.exportBytes = text.length;
    const file = await time('parseMs', () => parseSessionFile(text));
    expect(file.events).toHaveLength(log.length);
    await time('sessionAtLastMs', () => sessionAt(file.events, log.length));
    await time('sessionAtMiddleMs', () => sessionAt(file.events, Math.floor(log.length / 2)));
    const { tools, counts } = countingTools(orderSupport.tools);
    const replayed = await time('replayMs', () =>
      replaySession({
        machine: { ...orderSupport, tools } as AnyMachineDefinition,
        log: file.events,
        journal: file.journal,
        clock: createVirtualClock(),
        limits: { maxSteps: 100_000 },
      }),
    );
    expect(replayed.events).toHaveLength(log.length);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    expect(figures.parseMs).toBeLessThan(5_000);
    expect(figures.sessionAtLastMs).toBeLessThan(1_000);
  }, 120_000);
});
