import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionStore } from '@flowing/runtime';

/** A durable store for the benchmark, and how to take it down. */
export interface BenchStore {
  store: SessionStore;
  close(): Promise<void>;
}

/** SQLite in a temporary file, with the store's defaults (WAL, synchronous=FULL); the reason when it cannot be used. */
export async function benchSqlite(): Promise<BenchStore | string> {
  let createSqliteStore: typeof import('@flowing/runtime/sqlite').createSqliteStore;
  try {
    ({ createSqliteStore } = await import('@flowing/runtime/sqlite'));
  } catch (error) {
    return `better-sqlite3 is not installed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'flowing-bench-'));
  const store = createSqliteStore({ file: join(dir, 'sessions.db') });
  return { store, close: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/**
 * Redis from `REDIS_URL`, or a redis-server of its own on a free loopback port (no persistence); the reason when
 * neither is there.
 */
export async function benchRedis(): Promise<BenchStore | string> {
  let createRedisStore: typeof import('@flowing/runtime/redis').createRedisStore;
  try {
    ({ createRedisStore } = await import('@flowing/runtime/redis'));
  } catch (error) {
    return `ioredis is not installed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  }
  const prefix = `bench-${process.pid}:`;
  if (process.env.REDIS_URL) {
    const store = createRedisStore({ url: process.env.REDIS_URL, prefix });
    return { store, close: () => store.close() };
  }
  const server = await startRedisServer();
  if (typeof server === 'string') return server;
  const store = createRedisStore({ url: `redis://127.0.0.1:${server.port}`, prefix });
  return {
    store,
    close: async () => {
      await store.close();
      server.child.kill('SIGTERM');
    },
  };
}

async function startRedisServer(): Promise<{ port: number; child: ChildProcess } | string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const failed = await new Promise<string | undefined>((resolve) => {
    child.once('error', (error) => resolve(`redis-server could not start (${error.message}); set REDIS_URL`));
    setTimeout(() => resolve(undefined), 300);
  });
  return failed ?? { port, child };
}
