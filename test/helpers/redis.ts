import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { within } from './wait.ts';

/** Where the tests expect redis-server (`.ci/run` installs it with apt). */
export const REDIS_SERVER = process.env.FLOWING_REDIS_SERVER ?? '/usr/bin/redis-server';

/**
 * A lease TTL for tests where a process holding sessions is SIGKILLed and another one resumes them: the survivor
 * waits for the dead holder's lease to expire, so it is kept well under the default lease wait (5 s).
 */
export const SHORT_LEASE_TTL_MS = 1_000;

/** A redis-server of the test's own, on a random loopback port. */
export interface TestRedis {
  url: string;
  port: number;
  process: ChildProcess;
  /** Stops it and waits for the exit (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** Kills it with SIGKILL at once (a crash), and waits for the exit. */
  kill(): Promise<void>;
}

/**
 * Starts redis-server on 127.0.0.1 with a free port (or `port`, to restart one) and no persistence unless `args` ask for it. A missing
 * redis-server fails the calling test with a message saying how to install it; it is never skipped.
 * @example const redis = await startRedis(); ...; await redis.stop();
 */
export async function startRedis(
  args: readonly string[] = ['--save', '', '--appendonly', 'no'],
  options: { dir?: string; port?: number } = {},
): Promise<TestRedis> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(
      `redis-server is not installed at ${REDIS_SERVER}: install it (apt-get install redis-server) — the Redis store tests need a real server`,
    );
  }
  const port = options.port ?? (await freePort());
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'yes', ...(options.dir ? ['--dir', options.dir] : []), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  // redis-server logs this line once it listens and has loaded its data (an append-only file, on a restart).
  let ready!: () => void;
  const listening = new Promise<void>((resolve) => (ready = resolve));
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
    if (output.includes('Ready to accept connections')) ready();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await within(
      Promise.race([
        listening,
        exited.then(() => {
          throw new Error('it exited');
        }),
      ]),
      10_000,
      'redis-server to accept connections',
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`redis-server did not start on port ${port} (${(error as Error).message}): ${output.trim()}`);
  }
  const waitExit = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { url: `redis://127.0.0.1:${port}`, port, process: child, stop: () => waitExit('SIGTERM'), kill: () => waitExit('SIGKILL') };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
