import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One answered request: status, parsed JSON body (undefined when it was not JSON) and latency in ms. */
export interface Answer {
  status: number;
  body: unknown;
  ms: number;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A JSON client over one keep-alive agent: at most `maxSockets` connections, so the number of requests in flight is
 * bounded by the agent as well as by the caller.
 */
export class JsonClient {
  readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    maxSockets: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  post(path: string, body: unknown, timeoutMs = 60_000): Promise<Answer> {
    return this.send('POST', path, JSON.stringify(body), timeoutMs);
  }

  get(path: string, timeoutMs = 60_000): Promise<Answer> {
    return this.send('GET', path, undefined, timeoutMs);
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: string, path: string, payload: string | undefined, timeoutMs: number): Promise<Answer> {
    const start = performance.now();
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.baseUrl),
        {
          method,
          agent: this.agent,
          headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let body: unknown;
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - start, headers: res.headers });
          });
        },
      );
      // Never hang: a request that gets no answer in time fails with its own message.
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/** Runs `tasks` with at most `limit` of them in flight; resolves when all have settled. */
export async function withConcurrency(limit: number, tasks: Iterable<() => Promise<void>>): Promise<void> {
  const iterator = tasks[Symbol.iterator]();
  const worker = async () => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) await next.value();
  };
  await Promise.all(Array.from({ length: limit }, worker));
}
