import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyProject } from './project.ts';

/** One request the ledger recorded: the tool, the idempotency key the runtime sent, the arguments. */
export interface LedgerRequest {
  id: number;
  tool: string;
  key: string;
  args: unknown;
  at: number;
}

/** The ledger service process (ledger-service.ts), seen from the test. */
export interface Ledger {
  url: string;
  /** Requests recorded after request `after` (all by default), in arrival order. */
  requests(after?: number): Promise<LedgerRequest[]>;
  /** How long every call takes from now on. */
  setDelay(ms: number): Promise<void>;
  /** Calls `listener` for every call the service records from now on (it prints each one); returns the unsubscribe. */
  onCall(listener: (call: { id: number; tool: string }) => void): () => void;
  stop(): Promise<void>;
}

/** Starts the ledger service with its SQLite file at `file` and waits until it listens. */
export async function startLedger(file: string): Promise<Ledger> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), new URL('./ledger-service.ts', import.meta.url).pathname, file],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listeners = new Set<(call: { id: number; tool: string }) => void>();
  const url = await new Promise<string>((resolve, reject) => {
    let partial = '';
    child.stdout!.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const listening = /^LEDGER (http:\/\/[\d.]+:\d+)$/.exec(line);
        if (listening) resolve(listening[1]!);
        const call = /^CALL (\d+) (\S+)$/.exec(line);
        if (call) for (const listener of listeners) listener({ id: Number(call[1]), tool: call[2]! });
      }
    });
    void exited.then(() => reject(new Error(`the ledger service exited before listening: ${stderr}`)));
  });
  return {
    url,
    async requests(after = 0) {
      const response = await fetch(`${url}/requests?after=${after}`);
      return ((await response.json()) as { requests: LedgerRequest[] }).requests;
    },
    async setDelay(ms) {
      const response = await fetch(`${url}/config`, { method: 'PUT', body: JSON.stringify({ delayMs: ms }) });
      if (!response.ok) throw new Error(`ledger config refused: ${response.status}`);
    },
    onCall(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Splits the runtime's idempotency key `<sessionId>:<invokeId>@<step>` into the session and the call. */
export function parseLedgerKey(key: string): { sessionId: string; callId: string } {
  const colon = key.indexOf(':');
  return { sessionId: key.slice(0, colon), callId: key.slice(colon + 1) };
}

/**
 * A throwaway project copy (see copyProject) whose order-support calls the ledger: `query_order` (idempotent) and
 * `issue_refund` (non-idempotent, high-risk) are replaced by the ledger-calling tools of ledger-tools.ts.
 */
export async function ledgerProject(): Promise<{ dir: string; remove(): Promise<void> }> {
  const project = await copyProject('flowing-ledger-');
  const tools = pathToFileURL(new URL('./ledger-tools.ts', import.meta.url).pathname).href;
  await writeFile(join(project.dir, 'tools', 'query_order.ts'), `export { queryOrder } from ${JSON.stringify(tools)};\n`);
  await writeFile(join(project.dir, 'tools', 'issue_refund.ts'), `export { issueRefund } from ${JSON.stringify(tools)};\n`);
  return project;
}
