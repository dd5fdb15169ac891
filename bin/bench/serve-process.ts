import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A `flowing serve` child process. */
export interface ServeProcess {
  url: string;
  pid: number;
  /** The child's peak resident set so far, bytes (Linux /proc), when known. */
  peakRss(): number | undefined;
  /** The child's resident set now, bytes (Linux /proc), when known. */
  rss(): number | undefined;
  /** SIGTERM, then SIGKILL after 10 s; resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `flowing serve --port 0 --no-rate-limit <args>` from the sources (this process's loader flags), in the
 * repository so it serves the example machines, and waits until /readyz answers 200 (at most 60 s).
 */
export async function startServe(args: readonly string[], from: { cli?: string; cwd?: string } = {}): Promise<ServeProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...process.execArgv,
      from.cli ?? fileURLToPath(new URL('../cli.ts', import.meta.url)),
      'serve',
      '--port',
      '0',
      '--no-rate-limit',
      ...args,
    ],
    {
      cwd: from.cwd ?? REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`flowing serve printed no URL within 60 s: ${stderr.slice(-1_000)}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /flowing serve: (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`flowing serve exited with ${code}: ${stderr.slice(-1_000)}`));
    });
  });
  const deadline = Date.now() + 60_000;
  while (
    (await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error(`flowing serve at ${url} was not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    peakRss: () => statusBytes(child.pid!, 'VmHWM'),
    rss: () => statusBytes(child.pid!, 'VmRSS'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A memory figure of /proc/<pid>/status in bytes, when there is one. */
function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
