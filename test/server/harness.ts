import { request } from 'node:http';
import { z } from 'zod';
import {
  createMemoryStore,
  createRuntime,
  defineTool,
  type AnyMachineDefinition,
  type MemoryStore,
  type Runtime,
  type RuntimeOptions,
} from '@flowing/runtime';
import { startServer, type RunningServer, type ServerLogEntry, type StartServerOptions } from '@flowing/runtime/server';

/** A runtime server on 127.0.0.1 port 0 over a memory store, with its log lines collected. */
export interface TestServer extends RunningServer {
  runtime: Runtime;
  store: MemoryStore;
  logs: ServerLogEntry[];
  /** fetch relative to the server's URL, with the JSON body parsed when there is one. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any }>;
}

export async function startTestServer(
  machines: AnyMachineDefinition[],
  options: StartServerOptions & { runtime?: Partial<RuntimeOptions> } = {},
): Promise<TestServer> {
  const store = createMemoryStore();
  const { runtime: runtimeOptions, ...serverOptions } = options;
  const runtime = createRuntime({ machines, store, ...runtimeOptions });
  const logs: ServerLogEntry[] = [];
  const server = await startServer(runtime, { port: 0, log: (entry) => logs.push(entry), ...serverOptions });
  return {
    ...server,
    runtime,
    store,
    logs,
    async call(method, path, callOptions = {}) {
      const headers: Record<string, string> = { ...callOptions.headers };
      let body: string | undefined = callOptions.raw;
      if (callOptions.body !== undefined) {
        body = JSON.stringify(callOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(server.url + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
  };
}

/**
 * A tool that runs until its AbortSignal fires, and records when it did. `started` resolves at its first call,
 * `aborted` with the time (performance.now()) of its first abort.
 */
export function abortableTool(name = 'wait') {
  const state = { calls: 0, abortedAt: undefined as number | undefined };
  let onStart!: () => void;
  let onAbort!: (at: number) => void;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  const aborted = new Promise<number>((resolve) => (onAbort = resolve));
  const tool = defineTool({
    name,
    description: 'waits until aborted',
    input: z.object({}),
    output: z.object({ ok: z.boolean() }),
    timeoutMs: 60_000,
    run(_input, { signal }) {
      state.calls++;
      onStart();
      return new Promise((_resolve, reject) => {
        signal.addEventListener(
          'abort',
          () => {
            state.abortedAt = performance.now();
            onAbort(state.abortedAt);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    },
  });
  return { tool, state, started, aborted };
}

/** A high-risk payment tool that counts its runs (the side-effect ledger of these tests). */
export function payTool() {
  const ledger: number[] = [];
  const tool = defineTool({
    name: 'pay',
    description: 'pays an amount',
    input: z.object({ amount: z.number() }),
    output: z.object({ receipt: z.string() }),
    risk: 'high',
    idempotent: false,
    timeoutMs: 5_000,
    async run({ amount }) {
      ledger.push(amount);
      return { receipt: `r-${ledger.length}` };
    },
  });
  return { tool, ledger };
}

/** The store's whole content as JSON, to prove a refused request changed nothing. */
export function storeDump(store: MemoryStore): string {
  const data = store.exportData();
  return JSON.stringify({
    records: [...data.records.entries()],
    events: [...data.events.entries()],
    journal: [...data.journal.entries()].map(([id, entries]) => [id, [...entries.entries()]]),
  });
}

/** A request through node:http, which lets a test set any Host header and send a chunked body. */
export function rawRequest(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; chunks?: readonly string[] },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        setHost: !options.headers?.host,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end();
  });
}
