// Issue 8 (security): a model API key never appears in events, stored records, call errors or process output.
// Sessions of order-support run end to end through the real `openai` SDK against the local fake server, on a real
// SQLite file and a real redis-server, and every byte the runtime kept or printed is searched for the key.
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRuntime, type LlmProvider, type RuntimeEvent } from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { httpError, reply, startFakeOpenAI, streamed, type FakeOpenAI } from '../helpers/fake-openai.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { createBackend, type StoreBackend, type StoreKind } from '../helpers/stores.ts';

/**
 * A distinctive key for one test. Scans look for its random part, so a key that was cut or prefixed on its way
 * (`Bearer sk-…`, `…secret-<random>`) is still found.
 */
function newApiKey(): { apiKey: string; secret: string } {
  const secret = randomBytes(16).toString('hex');
  return { apiKey: `sk-flowing-secret-${secret}`, secret };
}

/** Where `secret` occurs inside `value`, as paths like `events[3].data.error.message`; [] when nowhere. */
function findSecret(value: unknown, secret: string, path: string, seen = new Set<object>()): string[] {
  if (typeof value === 'string') return value.includes(secret) ? [path] : [];
  if (value === null || typeof value !== 'object') return [];
  if (seen.has(value)) return [];
  seen.add(value);
  if (value instanceof Uint8Array) return Buffer.from(value).includes(secret) ? [path] : [];
  const found: string[] = [];
  if (value instanceof Error) {
    // message, stack and cause are not enumerable.
    found.push(...findSecret(value.message, secret, `${path}.message`, seen), ...findSecret(value.stack, secret, `${path}.stack`, seen));
    if ('cause' in value) found.push(...findSecret(value.cause, secret, `${path}.cause`, seen));
  }
  if (value instanceof Map || value instanceof Headers) {
    for (const [key, item] of value.entries()) found.push(...findSecret([key, item], secret, `${path}<${String(key)}>`, seen));
  }
  const isArray = Array.isArray(value);
  for (const [key, item] of Object.entries(value)) {
    const itemPath = isArray ? `${path}[${key}]` : `${path}.${key}`;
    if (key.includes(secret)) found.push(`${itemPath} (the property name)`);
    found.push(...findSecret(item, secret, itemPath, seen));
  }
  return found;
}

/** Every row and column of every table of a SQLite file, read raw; with how many rows each table has. */
function findSecretInSqliteRows(file: string, secret: string): { found: string[]; rows: Record<string, number> } {
  const db = new Database(file, { fileMustExist: true });
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[];
    const found: string[] = [];
    const rows: Record<string, number> = {};
    for (const table of tables) {
      const all = db.prepare(`SELECT * FROM "${table.replaceAll('"', '""')}"`).all() as Array<Record<string, unknown>>;
      rows[table] = all.length;
      all.forEach((row, index) => {
        for (const [column, value] of Object.entries(row)) found.push(...findSecret(value, secret, `sqlite ${table}[${index}].${column}`));
      });
    }
    return { found, rows };
  } finally {
    db.close();
  }
}

/** The raw bytes of every file beside the database (the file, its -wal and -shm), freed pages included. */
async function findSecretInFilesOf(folder: string, secret: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(folder)) {
    if ((await readFile(join(folder, name))).includes(secret)) found.push(`file ${name}`);
  }
  return found;
}

/** Every key under `prefix`, its name and its whole value read with the command for its type. */
async function findSecretInRedis(
  admin: Redis,
  prefix: string,
  secret: string,
): Promise<{ found: string[]; types: Record<string, number> }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const found: string[] = [];
  const types: Record<string, number> = {};
  for (const key of keys) {
    const type = await admin.type(key);
    types[type] = (types[type] ?? 0) + 1;
    let value: unknown;
    if (type === 'string') value = await admin.getBuffer(key);
    else if (type === 'hash') value = await admin.hgetallBuffer(key);
    else if (type === 'list') value = await admin.lrangeBuffer(key, 0, -1);
    else if (type === 'set') value = await admin.smembersBuffer(key);
    else if (type === 'zset') value = await admin.zrangeBuffer(key, '0', '-1', 'WITHSCORES');
    else if (type === 'stream') value = await admin.xrangeBuffer(key, '-', '+');
    else throw new Error(`no reader for the Redis type '${type}' of key ${key}: the scan would miss it`);
    if (key.includes(secret)) found.push(`redis key name ${key}`);
    found.push(...findSecret(value, secret, `redis ${key}`));
  }
  return { found, types };
}

/** Everything written to stdout, stderr, the console and process warnings while it runs; `quiet` prints none of it. */
function captureOutput({ quiet = false } = {}) {
  const written: unknown[] = [];
  const undo: Array<() => void> = [];
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      written.push(chunk);
      return quiet || (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
    undo.push(() => {
      stream.write = original;
    });
  }
  const spies = (['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) => {
    const spy = vi.spyOn(console, method);
    return quiet ? spy.mockImplementation(() => {}) : spy;
  });
  undo.push(() => {
    for (const spy of spies) spy.mockRestore();
  });
  const onWarning = (warning: Error) => void written.push(warning);
  process.on('warning', onWarning);
  undo.push(() => void process.off('warning', onWarning));
  return {
    /** What was written so far: stream chunks, console arguments, warnings. */
    everything: () => [...written, ...spies.flatMap((spy) => spy.mock.calls)],
    stop: () => {
      for (const step of undo.splice(0).reverse()) step();
    },
  };
}

/** A TCP proxy in front of the fake server that keeps every byte the client sent, request headers included. */
async function startRecordingProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  const sent: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => sent.push(chunk));
    client.pipe(upstream).on('error', () => client.destroy());
    upstream.pipe(client).on('error', () => upstream.destroy());
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    /** The request bytes received so far, as text. */
    received: () => Buffer.concat(sent).toString('latin1'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let fake: FakeOpenAI;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let redis: TestRedis;
let admin: Redis;
const backends: StoreBackend[] = [];
let output: ReturnType<typeof captureOutput> | undefined;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  proxy = await startRecordingProxy(Number(new URL(fake.baseURL).port));
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  output?.stop();
  output = undefined;
  vi.unstubAllEnvs();
  for (const backend of backends.splice(0)) await backend.remove();
  expect(fake.pending()).toBe(0);
  fake.requests.length = 0;
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
  await proxy?.close();
  await fake?.close();
});

/** `Authorization: Bearer <key>` header lines among the bytes the proxy received. */
const bearerHeaders = (apiKey: string) => proxy.received().match(new RegExp(`^authorization: Bearer ${apiKey}\r$`, 'gim'))?.length ?? 0;

/** The OpenAI provider pointed at the recording proxy, its key given as an option or in OPENAI_API_KEY. */
function openaiProvider(apiKey: string, keyGivenAs: 'option' | 'OPENAI_API_KEY'): LlmProvider {
  vi.stubEnv('FLOWING_MODEL', '');
  if (keyGivenAs === 'option') return createOpenAIProvider({ baseURL: proxy.baseURL, apiKey, timeoutMs: 5_000, retryBaseMs: 1 });
  vi.stubEnv('OPENAI_API_KEY', apiKey);
  vi.stubEnv('OPENAI_BASE_URL', proxy.baseURL);
  return createOpenAIProvider({ timeoutMs: 5_000, retryBaseMs: 1 });
}

async function openBackend(kind: StoreKind): Promise<StoreBackend> {
  const backend = await createBackend(kind, redis);
  backends.push(backend);
  return backend;
}

/** Every place the store kept `secret`: the raw rows (SQLite) or keys (Redis), and for SQLite the files' bytes. */
async function findSecretInStore(backend: StoreBackend, secret: string): Promise<string[]> {
  if (backend.kind === 'sqlite') {
    const file = backend.where.file!;
    const rows = findSecretInSqliteRows(file, secret);
    // Not an empty file: the tables the runtime writes hold this test's session(s).
    expect(Object.keys(rows.rows)).toEqual(expect.arrayContaining(['sessions', 'events', 'journal']));
    expect(rows.rows.sessions).toBeGreaterThan(0);
    expect(rows.rows.events).toBeGreaterThan(0);
    return [...rows.found, ...(await findSecretInFilesOf(dirname(file), secret))];
  }
  const keys = await findSecretInRedis(admin, backend.where.prefix!, secret);
  // Records and event streams were written under the prefix, so the scan read something.
  expect(keys.types.stream).toBeGreaterThan(0);
  return keys.found;
}

const eventsOfType = (events: readonly RuntimeEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>);

describe.each(['sqlite', 'redis'] as const)('a model API key on the %s store', (kind) => {
  it.each(['option', 'OPENAI_API_KEY'] as const)(
    'given as %s, is sent to the model server and appears in no event, stored record, call error or output',
    async (keyGivenAs) => {
      const { apiKey, secret } = newApiKey();
      const backend = await openBackend(kind);
      const runtime = createRuntime({ machines: [orderSupport], store: backend.open(), llm: openaiProvider(apiKey, keyGivenAs) });
      output = captureOutput();

      // A whole conversation: classify, extract, three tools, a streamed reply; then small talk whose model call
      // fails with a 500 three times (the first echoing the key, logged as a retry), which ends the session.
      fake.enqueue(
        reply('{"label": "order_query"}'),
        reply('{"orderId": "A1001"}'),
        streamed(['Order A1001 ', 'has shipped.']),
        reply('{"label": "other"}'),
        httpError(500, `the model server broke with key ${apiKey}`),
        httpError(500, 'the model server broke'),
        httpError(500, 'the model server broke'),
      );
      const conversation = await runtime.createSession(orderSupport);
      const answered = await conversation.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
      const brokeDown = await conversation.send({ type: 'USER_MESSAGE', text: 'hello there' });
      // A second session whose first model call is refused with a 401 whose message echoes the key, as some servers do.
      fake.enqueue(httpError(401, `Incorrect API key provided: ${apiKey}`));
      const refused = await runtime.createSession(orderSupport);
      const refusedResult = await refused.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });

      const conversationEvents = await conversation.events();
      const refusedEvents = await refused.events();
      const results = {
        answered,
        brokeDown,
        refusedResult,
        conversationSnapshot: await conversation.snapshot(),
        refusedSnapshot: await refused.snapshot(),
      };
      const printed = output.everything();
      output.stop();

      // The key was really in use: every request reached the server carrying it.
      expect(fake.requests.map((r) => r.status)).toEqual([200, 200, 200, 200, 500, 500, 500, 401]);
      expect(eventsOfType(conversationEvents, 'llm.retry')).toHaveLength(2);
      expect(bearerHeaders(apiKey)).toBe(fake.requests.length);
      // The run did what it should, so the events below are the ones a real run writes, failures included.
      expect(
        eventsOfType(conversationEvents, 'message.delta')
          .map((d) => d.text)
          .join(''),
      ).toBe('Order A1001 has shipped.');
      const failures = [...eventsOfType(conversationEvents, 'llm.failed'), ...eventsOfType(refusedEvents, 'llm.failed')];
      expect(failures.map((d) => [d.error.code, d.error.details?.status])).toEqual([
        ['LLM_FAILED', 500],
        ['LLM_FAILED', 401],
      ]);
      expect(results.conversationSnapshot.context).toMatchObject({ error: 'LLM_FAILED' });

      expect(findSecret(conversationEvents, secret, 'conversation.events()')).toEqual([]);
      expect(findSecret(refusedEvents, secret, 'refused.events()')).toEqual([]);
      expect(findSecret(results, secret, 'results')).toEqual([]);
      expect(await findSecretInStore(backend, secret)).toEqual([]);
      expect(findSecret(printed, secret, 'output')).toEqual([]);
    },
  );

  it('the check finds a key planted in the session input, in the events and the stored records', async () => {
    const { apiKey, secret } = newApiKey();
    const backend = await openBackend(kind);
    const runtime = createRuntime({ machines: [orderSupport], store: backend.open(), llm: openaiProvider(apiKey, 'option') });
    const planted = await runtime.createSession(orderSupport, { userId: apiKey });

    expect(findSecret(await planted.events(), secret, 'events').length).toBeGreaterThan(0);
    const stored = await findSecretInStore(backend, secret);
    if (kind === 'sqlite') {
      expect(stored).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^sqlite sessions\[0\]\.record$/),
          expect.stringMatching(/^sqlite events\[\d+\]\.body$/),
          expect.stringMatching(/^file sessions\.db/),
        ]),
      );
    } else {
      expect(stored).toEqual(expect.arrayContaining([expect.stringMatching(/\}:r\.r$/), expect.stringMatching(/\}:e\[\d+\]/)]));
    }
  });
});

describe('a model API key in failed calls', () => {
  it('is in no part of the error a refused call throws: message, details, stack or the SDK error it wraps', async () => {
    const { apiKey, secret } = newApiKey();
    fake.enqueue(httpError(401, 'Incorrect API key provided'));
    const error = await createOpenAIProvider({ baseURL: proxy.baseURL, apiKey, model: 'fake-model', modelOverride: null })
      .classify({ kind: 'classify', text: 'where is my order', labels: ['order_query', 'other'] }, { signal: new AbortController().signal })
      .then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; toJSON?: () => unknown },
      );

    expect(bearerHeaders(apiKey)).toBe(1);
    expect(error?.code).toBe('LLM_FAILED');
    expect(findSecret(error, secret, 'error')).toEqual([]);
    expect(findSecret(error?.toJSON?.(), secret, 'error.toJSON()')).toEqual([]);
  });

  it('the check finds a key in an error that carries it', () => {
    const { apiKey, secret } = newApiKey();
    const wrapped = new Error('outer', {
      cause: Object.assign(new Error('inner'), { headers: new Headers({ authorization: `Bearer ${apiKey}` }) }),
    });
    expect(findSecret(wrapped, secret, 'error')).toEqual(['error.cause.headers<authorization>[1]']);
  });

  it('the check finds a key written to stdout, stderr, the console or a process warning', async () => {
    const { apiKey, secret } = newApiKey();
    const channels = {
      stdout: () => process.stdout.write(`${apiKey}\n`),
      stderr: () => process.stderr.write(Buffer.from(`key=${apiKey}\n`)),
      console: () => console.error('config', { openai: { apiKey } }),
      warning: () => process.emitWarning(`bad key ${apiKey}`, { code: 'TEST_PLANTED_KEY' }),
    };
    for (const [channel, write] of Object.entries(channels)) {
      output = captureOutput({ quiet: true });
      write();
      // A process warning is delivered on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      const printed = output.everything();
      output.stop();
      expect(findSecret(printed, secret, 'output'), channel).not.toEqual([]);
    }
  });
});
