import { createRuntime, createXStateTrace, FlowingError } from '@flowing/runtime';
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
  const opened = await openServeStore(undefined, log);
  // The studio shows XState's own inspection records in an event's details (kept in memory, bounded).
  const xstateTrace = createXStateTrace();
  const runtime = createRuntime({ machines: served.definitions, store: opened.store, llm, inspect: xstateTrace.inspect });
  const app = createServer(runtime, {
    specs: served.specs,
    xstateTrace,
    log: (entry) => log(JSON.stringify(entry)),
  });
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
