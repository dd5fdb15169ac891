import { spawn, type ChildProcess } from 'node:child_process';
import { expect, vi } from 'vitest';
import { cliArgs } from './cli.ts';
export { seededRandom } from './seeded.ts';

/** A `flowing serve` child process on a free port, started in a project folder. */
export interface ServeChild {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts `flowing serve --port 0 ...args` in `dir` and waits until /readyz answers 200 (start-up recovery is over). */
export async function startServeChild(dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<ServeChild> {
  const child = spawn(process.execPath, cliArgs('serve', '--port', '0', ...args), { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /http:\/\/[\d.]+:\d+/.exec(stdout);
      if (match) resolve(match[0]);
    });
    void exited.then((code) => reject(new Error(`flowing serve exited ${code}: ${stderr}`)));
  });
  // Nothing is printed when recovery is over (only when it resumed something): /readyz is the signal.
  await vi.waitFor(
    async () => {
      const status = await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      expect(status, `flowing serve at ${url} ready (stderr: ${stderr})`).toBe(200);
    },
    { timeout: 30_000, interval: 20 },
  );
  return { child, url, exited, stderr: () => stderr };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An event as the server returns and stores it. */
export interface WireEvent {
  seq: number;
  type: string;
  data: Record<string, any>;
  [key: string]: unknown;
}

/** A session as `GET /sessions/:id` answers it (the fields the tests read). */
export interface WireSession {
  sessionId: string;
  status: string;
  context: Record<string, any>;
  pendingApproval: { approvalId: string } | null;
  error: { code: string; message: string } | null;
  seq: number;
}

/**
 * An HTTP client that keeps what the server acknowledged: the sessions whose creation was answered 201 and every
 * event of a send answered `applied`. After a crash these must all still be there.
 */
export class AckingClient {
  /** Sessions whose creation the server acknowledged, with the highest seq known to be stored. */
  readonly created = new Map<string, number>();
  /** Acknowledged events by session and seq. */
  readonly acked = new Map<string, Map<number, WireEvent>>();
  url = '';

  async create(sessionId: string): Promise<void> {
    const response = await this.post('/sessions', { machine: 'order-support', sessionId });
    if (response.status === 201) this.created.set(sessionId, (await response.json()).seq);
    else await response.body?.cancel();
  }

  async view(sessionId: string): Promise<WireSession | undefined> {
    const response = await this.request('GET', `/sessions/${sessionId}`);
    if (response.status === 404) return undefined;
    return (await okJson(response)) as WireSession;
  }

  /** Sends an event (or an approval) and records the events of an applied answer. */
  async send(sessionId: string, path: 'events' | 'approve', body: unknown): Promise<void> {
    const response = await this.post(`/sessions/${sessionId}/${path}`, body);
    const result = (await response.json()) as { applied?: boolean; events?: WireEvent[] };
    if (response.status !== 200 || !result.applied) return;
    let events = this.acked.get(sessionId);
    if (!events) this.acked.set(sessionId, (events = new Map()));
    for (const event of result.events ?? []) events.set(event.seq, event);
  }

  /** The whole stored log of a session, paged. */
  async log(sessionId: string): Promise<WireEvent[]> {
    const all: WireEvent[] = [];
    for (let after = 0; ; ) {
      const page = (await okJson(await this.request('GET', `/sessions/${sessionId}/events?after=${after}&limit=1000`))) as {
        events: WireEvent[];
        nextAfter?: number;
      };
      all.push(...page.events);
      if (page.nextAfter === undefined) return all;
      after = page.nextAfter;
    }
  }

  /** Every stored session id, paged. */
  async sessionIds(): Promise<Array<{ sessionId: string; status: string }>> {
    const all: Array<{ sessionId: string; status: string }> = [];
    for (let cursor: string | undefined; ; ) {
      const page = (await okJson(
        await this.request('GET', `/sessions?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
      )) as { sessions: Array<{ sessionId: string; status: string }>; nextCursor?: string };
      all.push(...page.sessions);
      if (!page.nextCursor) return all;
      cursor = page.nextCursor;
    }
  }

  private post(path: string, body: unknown): Promise<Response> {
    return this.request('POST', path, body);
  }

  /** One request; a 429 of the server's rate limit is waited out (Retry-After) and sent again. */
  private async request(method: string, path: string, body?: unknown): Promise<Response> {
    for (;;) {
      const response = await fetch(
        `${this.url}${path}`,
        body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
      );
      if (response.status !== 429) return response;
      await response.body?.cancel();
      await sleep(Math.max(50, Number(response.headers.get('retry-after') ?? 1) * 1000));
    }
  }
}

/** The JSON body of a 200 answer; anything else fails with the status and the body, so a check never reads an error as data. */
async function okJson(response: Response): Promise<unknown> {
  if (response.status !== 200) throw new Error(`${response.url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return response.json();
}

/**
 * The log invariants of RELIABILITY.md: seq contiguous from 1 (so no duplicates), and every call id has at most one
 * `tool.completed` (a call re-run after a crash logs `tool.started` again, never a second result). Returns what is
 * wrong, empty when all holds.
 */
export function logProblems(sessionId: string, log: readonly WireEvent[]): string[] {
  const problems: string[] = [];
  log.forEach((event, i) => {
    if (event.seq !== i + 1) problems.push(`${sessionId}: event ${i + 1} has seq ${event.seq}`);
  });
  const completed = new Map<string, number>();
  const started = new Set<string>();
  for (const event of log) {
    if (event.type === 'tool.started') started.add(event.data.callId);
    if (event.type === 'tool.completed' && event.data.resolvedBy !== 'person') {
      if (!started.has(event.data.callId)) problems.push(`${sessionId}: tool.completed for ${event.data.callId} without tool.started`);
      completed.set(event.data.callId, (completed.get(event.data.callId) ?? 0) + 1);
    }
  }
  for (const [callId, count] of completed) if (count > 1) problems.push(`${sessionId}: ${count} tool.completed for ${callId}`);
  return problems;
}
