import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';

/** A redis-server the benchmark started for itself. */
export interface BenchRedisServer {
  url: string;
  stop(): Promise<void>;
}

/** The redis-server binary: FLOWING_REDIS_SERVER, else the first `redis-server` on PATH or in /usr/bin. */
function redisServerBinary(): string | undefined {
  if (process.env.FLOWING_REDIS_SERVER) return process.env.FLOWING_REDIS_SERVER;
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  return dirs.map((dir) => join(dir, 'redis-server')).find((path) => existsSync(path));
}

/**
 * Starts redis-server on a free loopback port without persistence (the benchmark measures the store's code path, not
 * the disk); answers the reason as a string when there is no binary or it does not come up within 10 s.
 */
export async function startBenchRedis(): Promise<BenchRedisServer | string> {
  const binary = redisServerBinary();
  if (!binary) return 'no redis-server binary (install redis-server, or pass --redis redis://HOST:PORT)';
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (spawnError || child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      return `redis-server did not start on port ${port}${spawnError ? ` (${spawnError.message})` : ''}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
