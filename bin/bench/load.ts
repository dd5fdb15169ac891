import { performance } from 'node:perf_hooks';
import type { JsonClient } from './http-client.ts';
import { percentile } from './stats.ts';

/** The workload: `sessions` sessions of `machine`, each sent `events` messages one after another, all sessions at once. */
export interface LoadOptions {
  sessions: number;
  events: number;
  /** Requests in flight at most (the client's agent has as many sockets). */
  concurrency: number;
  machine?: string;
  /** The event every send carries (default: an order-support USER_MESSAGE). */
  event?: { type: string; [key: string]: unknown };
  /** Prefix of the session ids, so runs against one store never collide. */
  idPrefix?: string;
}

/** What one load run measured; `errors` and `lost` must be 0. */
export interface LoadReport {
  sessions: number;
  events: number;
  createPerSecond: number;
  /** Events acknowledged (applied) per second of the event phase. */
  eventsPerSecond: number;
  /** Latency of the event sends, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Sends or creates that failed: a non-2xx answer, a refusal, a connection error or a timeout. */
  errors: number;
  /** Acknowledged events missing from (or different in) the session's stored log, plus gaps in its seq. */
  lost: number;
  /** The first few problems, for the report. */
  samples: string[];
}

const DEFAULT_EVENT = { type: 'USER_MESSAGE', text: 'where is my order A1001' };

/** At most `limit` of the functions given to `run` in flight at once; the others wait in arrival order. */
function limiter(limit: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * Drives a runtime server over HTTP: creates the sessions, then sends every session its events (sessions
 * interleaved, each session's events in order), then reads every session's log back and checks that its seq is
 * contiguous from 1 and that every event a send acknowledged is stored with the same seq and type.
 */
export async function runLoad(client: JsonClient, options: LoadOptions): Promise<LoadReport> {
  const machine = options.machine ?? 'order-support';
  const event = options.event ?? DEFAULT_EVENT;
  const prefix = options.idPrefix ?? `load-${Date.now().toString(36)}`;
  const limit = limiter(options.concurrency);
  const samples: string[] = [];
  const note = (problem: string) => {
    if (samples.length < 10) samples.push(problem);
  };
  let errors = 0;

  const ids = Array.from({ length: options.sessions }, (_, i) => `${prefix}-${i}`);
  const createStart = performance.now();
  const created = await Promise.all(
    ids.map((sessionId) =>
      limit(async () => {
        try {
          const answer = await client.post('/sessions', { machine, sessionId });
          if (answer.status === 201) return true;
          note(`create ${sessionId}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
        } catch (error) {
          note(`create ${sessionId}: ${(error as Error).message}`);
        }
        errors++;
        return false;
      }),
    ),
  );
  const createMs = performance.now() - createStart;

  const acknowledged = new Map<string, Array<{ seq: number; type: string }>>();
  const latencies: number[] = [];
  let sendErrors = 0;
  const eventStart = performance.now();
  await Promise.all(
    ids.map(async (sessionId, i) => {
      if (!created[i]) return;
      const acks: Array<{ seq: number; type: string }> = [];
      acknowledged.set(sessionId, acks);
      for (let k = 0; k < options.events; k++) {
        await limit(async () => {
          try {
            const answer = await client.post(`/sessions/${sessionId}/events`, event);
            latencies.push(answer.ms);
            const body = answer.body as { applied?: boolean; events?: Array<{ seq: number; type: string }> } | undefined;
            if (answer.status === 200 && body?.applied === true) {
              for (const e of body.events ?? []) acks.push({ seq: e.seq, type: e.type });
              return;
            }
            note(`send ${k + 1} to ${sessionId}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
          } catch (error) {
            note(`send ${k + 1} to ${sessionId}: ${(error as Error).message}`);
          }
          sendErrors++;
          errors++;
        });
      }
    }),
  );
  const eventMs = performance.now() - eventStart;

  let lost = 0;
  await Promise.all(
    [...acknowledged].map(([sessionId, acks]) =>
      limit(async () => {
        const stored = await readLog(client, sessionId).catch((error: Error) => {
          note(`read ${sessionId}: ${error.message}`);
          errors++;
          return undefined;
        });
        if (!stored) return;
        const bySeq = new Map(stored.map((e) => [e.seq, e.type]));
        stored.forEach((e, index) => {
          if (e.seq !== index + 1) {
            lost++;
            note(`${sessionId}: seq ${e.seq} at position ${index + 1} (a gap or a duplicate)`);
          }
        });
        for (const ack of acks) {
          if (bySeq.get(ack.seq) !== ack.type) {
            lost++;
            note(
              `${sessionId}: acknowledged ${ack.type} #${ack.seq} is ${bySeq.has(ack.seq) ? `stored as ${bySeq.get(ack.seq)}` : 'not stored'}`,
            );
          }
        }
      }),
    ),
  );

  const sent = latencies.length;
  return {
    sessions: options.sessions,
    events: sent,
    createPerSecond: (created.filter(Boolean).length / createMs) * 1000,
    eventsPerSecond: ((sent - sendErrors) / eventMs) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(0, ...latencies),
    errors,
    lost,
    samples,
  };
}

/** Every stored event of a session, all pages. */
async function readLog(client: JsonClient, sessionId: string): Promise<Array<{ seq: number; type: string }>> {
  const events: Array<{ seq: number; type: string }> = [];
  let after = 0;
  for (;;) {
    const answer = await client.get(`/sessions/${sessionId}/events?after=${after}&limit=1000`);
    if (answer.status !== 200) throw new Error(`GET events: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    const page = answer.body as { events: Array<{ seq: number; type: string }>; nextAfter?: number };
    events.push(...page.events.map((e) => ({ seq: e.seq, type: e.type })));
    if (page.nextAfter === undefined) return events;
    after = page.nextAfter;
  }
}
