import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs } from '../helpers/cli.ts';

/** A `flowing serve` child process on a free port, with its stderr (JSON log lines) kept. */
export interface ServeChild {
  child: ChildProcess;
  url: string;
  pid: number;
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGKILL (if still running) and wait for the exit. */
  kill(): Promise<void>;
}

/**
 * A throwaway project whose machines/ folder serves the test machines of takeover-machines.ts (each one a
 * re-export, as generated code would be) and a ledger file the slow tool appends to.
 */
export async function makeLeaseProject(): Promise<{ dir: string; ledger: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-lease-'));
  const source = pathToFileURL(fileURLToPath(new URL('./takeover-machines.ts', import.meta.url))).href;
  for (const [id, name] of [
    ['lease-counter', 'leaseCounterMachine'],
    ['lease-slow', 'leaseSlowMachine'],
  ]) {
    await mkdir(join(dir, 'machines', id!), { recursive: true });
    await writeFile(join(dir, 'machines', id!, `${id}.machine.ts`), `export { ${name} } from ${JSON.stringify(source)};\n`);
  }
  const ledger = join(dir, 'ledger.jsonl');
  await writeFile(ledger, '');
  return { dir, ledger, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Starts `flowing serve --port 0 <args>` in `dir` and waits for the line with its URL. */
export async function startServe(dir: string, args: string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, cliArgs('serve', '--port', '0', '--no-rate-limit', ...args), {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`flowing serve printed no URL within 60 s: ${stderr}`)), 60_000);
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /http:\/\/[\d.]+:\d+/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    void exited.then((code) => reject(new Error(`flowing serve exited ${code}: ${stderr}`)));
  });
  return {
    child,
    url,
    pid: child.pid!,
    stderr: () => stderr,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** POST JSON, answering the status and parsed body. */
export async function post(url: string, body: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}

export async function getJson(url: string): Promise<any> {
  return (await fetch(url)).json();
}

/** Every stored event of a session, following the `nextAfter` pages. */
export async function fullLog(base: string, sessionId: string): Promise<Array<{ seq: number; type: string; data: any; at: number }>> {
  const events: Array<{ seq: number; type: string; data: any; at: number }> = [];
  let after = 0;
  for (;;) {
    const page = await getJson(`${base}/sessions/${sessionId}/events?after=${after}&limit=1000`);
    events.push(...page.events);
    if (page.nextAfter === undefined) return events;
    after = page.nextAfter;
  }
}
