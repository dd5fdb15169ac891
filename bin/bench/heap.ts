import type { AnyActorRef } from 'xstate';
import { createMemoryStore, createRuntime, type AnyMachineDefinition, type MemoryStore, type Runtime } from '@flowing/runtime';
import { ensureTypeScriptLoader } from '../typescript-loader.ts';
import { benchProvider } from './model.ts';
import { dataHeap, settledHeap } from './retained-heap.ts';
import { BENCH_MESSAGE, startBareXState } from './workload.ts';

/** Whose sessions a heap child keeps: the Flowing runtime with the memory store, or bare XState actors. */
export type HeapSubject = 'flowing' | 'bare';

export interface HeapConfig {
  subject: HeapSubject;
  /** Sessions kept per phase. */
  count: number;
}

/** Heap retained per session, two ways: everything (`heapUsed`) and without V8's compiled code (`data`). */
export interface Retained {
  heap: number;
  data: number;
}

/** What one heap child measured; bytes per session. */
export interface HeapFigure {
  /** Sessions created and waiting for their first message. */
  created: Retained;
  /** Sessions after one turn (classify, extract, 3 tools, generate), waiting for their next message. */
  afterTurn: Retained;
  /**
   * One session after its turn as its store holds it, in bytes of JSON (UTF-8): for Flowing the record (with the
   * persisted XState snapshot inside it), the event log and the journal; for bare XState the persisted snapshot.
   */
  stored: { record: number; snapshot: number; log: number; events: number; journal: number; calls: number };
}

async function measured(): Promise<Retained> {
  const heap = await settledHeap();
  return { heap, data: await dataHeap() };
}

const perSession = (after: Retained, before: Retained, count: number): Retained => ({
  heap: (after.heap - before.heap) / count,
  data: (after.data - before.data) / count,
});

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

/** How the subject keeps a session: create one (and give it one turn), keeping what it keeps; answers its id. */
interface Keeper {
  create(turn: boolean): Promise<string>;
  /** A session after its turn, as stored. */
  stored(id: string): Promise<HeapFigure['stored']>;
}

function flowingKeeper(definition: AnyMachineDefinition): Keeper {
  const store: MemoryStore = createMemoryStore();
  const runtime: Runtime = createRuntime({ machines: [definition], store, llm: benchProvider() });
  return {
    // Ids as the runtime makes them (random UUIDs), since every stored record and event carries one.
    async create(turn) {
      const session = await runtime.createSession(definition);
      if (!turn) return session.id;
      const result = await session.send({ type: 'USER_MESSAGE', text: BENCH_MESSAGE });
      if (!result.applied || result.status !== 'waiting')
        throw new Error(`session ${session.id} did not settle: ${JSON.stringify(result).slice(0, 300)}`);
      return session.id;
    },
    async stored(sessionId) {
      const record = (await store.load(sessionId))!;
      const events = await store.readEvents(sessionId);
      const journal = await store.readJournal(sessionId);
      const log = events.reduce((sum, event) => sum + bytes(event), 0);
      return {
        record: bytes(record),
        snapshot: bytes(record.snapshot),
        log,
        events: events.length,
        journal: journal.reduce((sum, entry) => sum + bytes(entry), 0),
        calls: journal.length,
      };
    },
  };
}

function bareKeeper(definition: AnyMachineDefinition, capacity: number): Keeper {
  const actors: AnyActorRef[] = new Array<AnyActorRef>(capacity);
  let kept = 0;
  return {
    async create(turn) {
      actors[kept] = await startBareXState(definition, turn ? BENCH_MESSAGE : undefined);
      return String(kept++);
    },
    async stored(id) {
      const snapshot = bytes(actors[Number(id)]!.getPersistedSnapshot());
      return { record: 0, snapshot, log: 0, events: 0, journal: 0, calls: 0 };
    },
  };
}

/**
 * Child-process part of the benchmark (run with --expose-gc): the heap `count` sessions retain, first just created,
 * then after one turn each, kept the way `subject` keeps them (the runtime: a few warm runs, every other session a
 * record, log and journal in the memory store; bare XState: a started actor each, as its holder keeps it).
 */
export async function measureHeap(config: HeapConfig): Promise<HeapFigure> {
  await ensureTypeScriptLoader();
  const { loadMachine } = await import('../run/load.ts');
  const definition = await loadMachine('order-support');
  const warmup = 300;
  const keeper = config.subject === 'flowing' ? flowingKeeper(definition) : bareKeeper(definition, warmup + 2 * config.count);
  // Run every code path first so the heap measured holds sessions, not the first compilation of their code.
  for (let i = 0; i < warmup; i++) await keeper.create(i % 2 === 1);
  // A heap snapshot keeps a little for good (the first one more); one is taken before anything is measured.
  await dataHeap();
  const before = await measured();
  for (let i = 0; i < config.count; i++) await keeper.create(false);
  const created = await measured();
  let last = '';
  for (let i = 0; i < config.count; i++) last = await keeper.create(true);
  const afterTurn = await measured();
  return {
    created: perSession(created, before, config.count),
    afterTurn: perSession(afterTurn, created, config.count),
    stored: await keeper.stored(last),
  };
}
