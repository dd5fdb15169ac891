import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { REPO_DIR } from '../helpers/project.ts';

/** The load tests' server process (load-server.ts), and its question channel. */
export interface LoadServer {
  url: string;
  pid: number;
  heap(): Promise<number>;
  /** The heap after full GCs without V8's compiled code and its feedback (see dataHeap in load-server.ts). */
  dataHeap(): Promise<number>;
  handles(): Promise<Record<string, number>>;
  rss(): Promise<number>;
  /** Ends it (stdin closed, then SIGKILL after 5 s) and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts load-server.ts in a child process with --expose-gc; `store` is `memory` or `sqlite:FILE`. */
export async function startLoadServer(store: string, heartbeatMs = 15_000): Promise<LoadServer> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--conditions=@flowing/source',
      '--import',
      import.meta.resolve('tsx'),
      fileURLToPath(new URL('./load-server.ts', import.meta.url)),
      store,
      String(heartbeatMs),
    ],
    { cwd: REPO_DIR, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async <T>(what: string): Promise<T> => {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`load server: no answer to ${what} within 60 s; stderr: ${stderr}`)), 60_000).unref(),
    );
    const line = await Promise.race([lines.next(), timeout]);
    if (line.done) throw new Error(`load server exited; stderr: ${stderr}`);
    return JSON.parse(line.value) as T;
  };
  const ask = async <T>(command: string, key: string): Promise<T> => {
    child.stdin!.write(`${command}\n`);
    return (await next<Record<string, T>>(command))[key]!;
  };
  const { url } = await next<{ url: string }>('start');
  return {
    url,
    pid: child.pid!,
    heap: () => ask<number>('heap', 'heap'),
    dataHeap: () => ask<number>('dataHeap', 'dataHeap'),
    handles: () => ask<Record<string, number>>('handles', 'handles'),
    rss: () => ask<number>('rss', 'rss'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
