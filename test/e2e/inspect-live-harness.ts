import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { createRuntime, createXStateTrace, type AnyTool, type Runtime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { createSqliteStore, type SqliteStore } from '@flowing/runtime/sqlite';
import { startStudio, type RuntimeApp } from '@flowing/studio/server';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { copyProject } from '../helpers/project.ts';
import { countingTools } from '../helpers/runtime-counting.ts';
import { checkCase } from '../../bin/studio/case-checker.ts';

/**
 * Wraps a runtime app so a test can cut every open SSE stream at once (the server closing its stream routes), the
 * way a dropped connection looks to the browser: the response ends mid-session and the client has to resume.
 */
export function cuttableStreams(app: RuntimeApp): RuntimeApp & { cut(): number; streamsOpened: number } {
  const open = new Set<TransformStreamDefaultController<Uint8Array>>();
  const wrapped = {
    streamsOpened: 0,
    async fetch(request: Request, env?: unknown): Promise<Response> {
      const response = await app.fetch(request, env);
      if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
      wrapped.streamsOpened++;
      let controller!: TransformStreamDefaultController<Uint8Array>;
      const pass = new TransformStream<Uint8Array, Uint8Array>({
        start(c) {
          controller = c;
          open.add(c);
        },
        flush() {
          open.delete(controller);
        },
      });
      void response.body.pipeTo(pass.writable).catch(() => undefined);
      return new Response(pass.readable, { status: response.status, headers: response.headers });
    },
    cut(): number {
      const count = open.size;
      for (const controller of open) controller.error(new Error('cut by the test'));
      open.clear();
      return count;
    },
    close: app.close,
  };
  return wrapped;
}

export interface InspectStudio {
  url: string;
  rootDir: string;
  runtime: Runtime;
  store: SqliteStore;
  /** Runs of each project tool since the start (the side-effect ledger of the tests). */
  counts: Record<string, number>;
  streams: ReturnType<typeof cuttableStreams>;
  close(): Promise<void>;
}

/**
 * The studio `flowing studio` serves, on 127.0.0.1 and a free port, over a temporary copy of the project, with the
 * runtime mounted under /api/runtime: the example machines, the SQLite store in `<copy>/.flowing/sessions.db`, the
 * scripted model, and the project's tools wrapped to count their runs (each waits `toolDelayMs` first, like I/O).
 */
export async function startInspectStudio(options: { toolDelayMs?: number } = {}): Promise<InspectStudio> {
  const copy = await copyProject('flowing-inspect-');
  const store = createSqliteStore({ projectDir: copy.dir });
  const { tools, counts } = countingTools({ ...orderSupport.tools, ...incidentTriage.tools } as Record<string, AnyTool>, {
    delayMs: options.toolDelayMs,
  });
  const xstateTrace = createXStateTrace(); // as `flowing studio` mounts its runtime
  const runtime = createRuntime({ machines: [orderSupport, incidentTriage], store, tools, inspect: xstateTrace.inspect });
  const specs: Record<string, unknown> = {};
  for (const id of ['order-support', 'incident-triage'])
    specs[id] = JSON.parse(await readFile(join(copy.dir, 'machines', id, `${id}.flow.json`), 'utf8'));
  const app = createServer(runtime, { specs, xstateTrace, rateLimit: { client: false, session: false }, log: () => {} });
  const streams = cuttableStreams({ fetch: app.fetch, close: async () => app.dispose() });
  const studio = await startStudio({
    rootDir: copy.dir,
    appDir: inject('studioAppDir'),
    port: 0,
    host: '127.0.0.1',
    runtimeApp: streams,
    checkCase,
  });
  return {
    url: studio.url,
    rootDir: copy.dir,
    runtime,
    store,
    counts,
    streams,
    async close() {
      await studio.close();
      await store.close();
      await copy.remove();
    },
  };
}
