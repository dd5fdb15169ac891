import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createRuntime,
  exportSession,
  exportSessionFile,
  parseSessionFile,
  replaySession,
  sessionAt,
  sessionFileSpecNotice,
  type AnyMachineDefinition,
} from '@flowing/runtime';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { createVirtualClock } from '@flowing/runtime';
import { countingTools } from '../helpers/runtime-counting.ts';

let dir: string;
let store: SqliteStore;
let sessionId: string;
let text: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowing-export-'));
  store = createSqliteStore({ file: join(dir, 'sessions.db') });
  const runtime = createRuntime({ machines: [orderSupport], store, clock: createVirtualClock() });
  const session = await runtime.createSession(orderSupport, { userId: 'u-ada' }, { sessionId: 'export-1', traceId: 'trace-export' });
  await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
  await session.send({ type: 'USER_MESSAGE', text: 'refund A1002 please' });
  await session.send({ type: 'APPROVE' });
  sessionId = session.id;
  text = await exportSession(store, sessionId, { now: 1_700_000_000_000 });
  return async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
});

const lines = () => text.trimEnd().split('\n');
const failure = (input: string) => {
  try {
    parseSessionFile(input);
  } catch (error) {
    return error as { code: string; message: string; details: { line: number; reason: string } };
  }
  throw new Error('the file was accepted');
};

describe('exportSession / parseSessionFile', () => {
  it('round-trips a SQLite session: header, every event and journal entry, the same state at every seq', async () => {
    const file = parseSessionFile(text);
    const events = await store.readEvents(sessionId, 0);
    const journal = await store.readJournal(sessionId);
    expect(file.header).toEqual({
      kind: 'flowing.session',
      formatVersion: 1,
      machineId: 'order-support',
      specHash: orderSupport.specHash,
      sessionId,
      exportedAt: 1_700_000_000_000,
      events: events.length,
      journal: journal.length,
    });
    expect(file.events).toEqual(events);
    expect(file.journal).toEqual(journal);
    for (let seq = 0; seq <= events.length; seq++) expect(sessionAt(file.events, seq)).toEqual(sessionAt(events, seq));
    expect(lines()).toHaveLength(1 + events.length + journal.length);
    expect(JSON.parse(lines().at(-1)!)).toHaveProperty('journal.key');
  });

  it('replays from the file alone without running a tool', async () => {
    const file = parseSessionFile(text);
    const { tools, counts } = countingTools(orderSupport.tools);
    const replayed = await replaySession({
      machine: { ...orderSupport, tools } as AnyMachineDefinition,
      log: file.events,
      journal: file.journal,
      clock: createVirtualClock(),
    });
    expect(JSON.stringify(replayed.events)).toBe(JSON.stringify(file.events));
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('names the file after the machine and the session, and refuses an unknown session', async () => {
    expect((await exportSessionFile(store, sessionId)).fileName).toBe('order-support-export-1.flowing.jsonl');
    await expect(exportSession(store, 'nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('reports a changed spec as SPEC_CHANGED, and nothing when the hash is the same', () => {
    const { header } = parseSessionFile(text);
    expect(sessionFileSpecNotice(header, orderSupport.specHash)).toBeNull();
    expect(sessionFileSpecNotice(header, 'f'.repeat(64))).toMatchObject({
      code: 'SPEC_CHANGED',
      message: expect.stringContaining('another version'),
    });
    expect(sessionFileSpecNotice(header, undefined)).toMatchObject({ code: 'SPEC_CHANGED' });
  });
});

describe('parseSessionFile refuses hostile and broken files with SESSION_FILE_INVALID naming the line', () => {
  const withLine = (index: number, line: string) =>
    lines()
      .map((l, i) => (i === index ? line : l))
      .join('\n');
  const cases: Array<[string, () => string, number | 'last' | 'end', string]> = [
    ['a file cut in the middle of a line', () => text.slice(0, text.length - 40), 'last', 'truncated'],
    ['a file cut at a line end', () => lines().slice(0, -2).join('\n'), 'end', 'truncated'],
    ['an empty file', () => '', 1, 'empty'],
    ['another kind of JSON-lines file', () => withLine(0, JSON.stringify({ kind: 'something.else', formatVersion: 1 })), 1, 'wrong_kind'],
    ['a newer format version', () => withLine(0, lines()[0]!.replace('"formatVersion":1', '"formatVersion":2')), 1, 'wrong_version'],
    ['a header with an extra field', () => withLine(0, lines()[0]!.replace('{', '{"extra":1,')), 1, 'bad_header'],
    [
      'a __proto__ key in an event',
      () => withLine(2, lines()[2]!.replace('"data":{', '"data":{"__proto__":{"polluted":true},')),
      3,
      'forbidden_key',
    ],
    [
      'an escaped __proto__ key',
      () => withLine(2, lines()[2]!.replace('"data":{', '"data":{"\\u005f_proto__":{"polluted":true},')),
      3,
      'forbidden_key',
    ],
    ['a line of 5 million characters', () => withLine(3, `{"x":"${'a'.repeat(5_000_000)}"}`), 4, 'line_too_long'],
    ['JSON nested 10,000 deep', () => withLine(3, `${'['.repeat(10_000)}${']'.repeat(10_000)}`), 4, 'too_deep'],
    ['a line that is not JSON', () => withLine(3, 'rm -rf /'), 4, 'not_json'],
    [
      'a gap in the seqs',
      () =>
        lines()
          .filter((_, i) => i !== 4)
          .join('\n'),
      5,
      'seq_gap',
    ],
    [
      'an event of another session',
      () => withLine(2, lines()[2]!.replaceAll(`"sessionId":"${'export-1'}"`, '"sessionId":"other"')),
      3,
      'other_session',
    ],
    ['an unknown event type', () => withLine(2, lines()[2]!.replace(/"type":"[a-z.]+"/, '"type":"bogus.event"')), 3, 'bad_event'],
    ['an event after the journal', () => [...lines(), lines()[1]].join('\n'), 'last', 'out_of_order'],
    ['a malformed journal entry', () => withLine(lines().length - 1, '{"journal":{"key":"x"}}'), 'last', 'bad_journal'],
  ];
  for (const [name, make, line, reason] of cases) {
    it(`refuses ${name}`, () => {
      const input = make();
      const started = performance.now();
      const error = failure(input);
      expect(performance.now() - started).toBeLessThan(1_000);
      const total = input.trimEnd().split('\n').length;
      const expectedLine = line === 'last' ? total : line === 'end' ? total + 1 : line;
      expect(error).toMatchObject({ code: 'SESSION_FILE_INVALID', details: { line: expectedLine, reason } });
      expect(error.message).toMatch(new RegExp(`^line ${expectedLine}: `));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }

  it('reads a file saved with CRLF line ends', () => {
    expect(parseSessionFile(text.replaceAll('\n', '\r\n')).events).toHaveLength(parseSessionFile(text).events.length);
  });
});
