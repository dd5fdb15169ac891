import { createRuntime, createXStateTrace, FlowingError, toFlowError } from '@flowing/runtime';
import type { RuntimeApp } from '@flowing/studio/server';
import { chooseProvider } from '../run/provider.ts';
import { openServeStore } from '../serve/store.ts';
import { loadProjectMachines } from './project-machines.ts';

/** Where the studio's runtime writes warnings and its server log (stderr, one line each). */
export type StudioRuntimeLog = (line: string) => void;

/**
 * The runtime `flowing studio` mounts under `/api/runtime`: the generated machines of the project in the working
 * directory, the SQLite store in its `.flowing/sessions.db`, the scripted model (or the OpenAI-compatible one
 * when OPENAI_BASE_URL is set), and the runtime server's routes. Sessions a previous studio left mid-step are resumed.
 * When another process (a `flowing serve`) owns the file, the studio opens it read-only: sessions are listed and
 * inspected, and runs are refused with STORE_READ_ONLY until that process stops.
 * Made on the first `/api/runtime` request, so the editor opens without waiting for the machines to load.
 * @example await studioCommand({ port: '0', runtimeApp: () => createStudioRuntimeApp() })
 */
export async function createStudioRuntimeApp(log: StudioRuntimeLog = (line) => process.stderr.write(`${line}\n`)): Promise<RuntimeApp> {
  const [{ createServer, recoverSessions }, served, llm] = await Promise.all([
    import('@flowing/runtime/server'),
    loadProjectMachines(process.cwd()),
    chooseProvider(),
  ]);
  if (served.definitions.length === 0) {
    throw new FlowingError(
      'UNKNOWN_MACHINE',
      'no generated machine found in machines/ (press Generate in the editor, or run `flowing codegen`)',
    );
  }
  let opened: Awaited<ReturnType<typeof openServeStore>>;
  let readOnly = false;
  try {
    opened = await openServeStore(undefined, log);
  } catch (error) {
    const flow = toFlowError(error);
    if (flow.code !== 'STORE_IN_USE') throw error;
    log(`flowing studio: ${flow.message}; the studio opens it read-only: sessions can be inspected, not run`);
    opened = await openServeStore(undefined, log, { readOnly: true });
    readOnly = true;
  }
  // The studio shows XState's own inspection records in an event's details (kept in memory, bounded).
  const xstateTrace = createXStateTrace();
  const runtime = createRuntime({ machines: served.definitions, store: opened.store, llm, inspect: xstateTrace.inspect });
  const app = createServer(runtime, {
    specs: served.specs,
    xstateTrace,
    log: (entry) => log(JSON.stringify(entry)),
  });
  // A read-only studio leaves recovery to the process that owns the file.
  if (!readOnly)
    void recoverSessions(runtime, app.settings.log).catch((error: unknown) =>
      log(`flowing studio: session recovery failed: ${(error as Error).message}`),
    );
  return {
    fetch: app.fetch,
    async close() {
      app.dispose();
      await opened.close();
    },
  };
}
