import type { Codegen, ToolCatalog } from '@flowing/codegen';
import type { CaseChecker } from './cases.ts';
import type { RuntimeStateCounts } from './stranding.ts';
import { createKeyedQueue } from './files.ts';
import { resolveRoots, type ProjectRoots } from './roots.ts';

/** What every handler shares: the allowed roots, the tool catalog, the one warm code generator and the write queue. */
export interface StudioContext {
  roots: ProjectRoots;
  /** The tools of tools/ (re-imported by the catalog when a file changed). */
  tools(): Promise<ToolCatalog>;
  /** The code generator, created on first use and kept warm for the server's lifetime. */
  codegen(): Promise<Codegen>;
  /** Serialises work per key: one file's check-then-write, or every use of the generator (`codegen`). */
  serial: <T>(key: string, task: () => Promise<T>) => Promise<T>;
  /** Checks a recorded case before it is saved (given by the CLI); without one, saving a case is refused. */
  checkCase?: CaseChecker;
  /** The connected runtime's sessions by active state (set when a runtime is mounted), for the save warning. */
  runtimeStates?: RuntimeStateCounts;
  dispose(): void;
}

let typescriptReady: Promise<void> | undefined;
/**
 * Makes sure tools/*.ts can be imported: when this process cannot import a `.ts` file, tsx's loader is registered,
 * once. Under tsx or vitest the probe imports fine. The built server (`flowing studio` from dist/) has no ts-probe.ts
 * next to it (ERR_MODULE_NOT_FOUND), and plain `vite` loading this plugin on Node cannot import it
 * (ERR_UNKNOWN_FILE_EXTENSION): both need the loader.
 */
function ensureTypeScript(): Promise<void> {
  typescriptReady ??= import(`${new URL('./ts-probe.ts', import.meta.url).href}?probe`).then(
    () => undefined,
    async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ERR_UNKNOWN_FILE_EXTENSION' && error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
      const { register } = await import('tsx/esm/api');
      register();
    },
  );
  return typescriptReady;
}

// codegen/ pulls in ts-morph (about 0.7 s to import); load it on first use, not when Vite reads its config.
const loadCodegen = () => import('@flowing/codegen');

/** Creates the shared handler context for a project root (the folder holding machines/ and tools/). */
export async function createStudioContext(rootDir: string, options: { checkCase?: CaseChecker } = {}): Promise<StudioContext> {
  const roots = await resolveRoots(rootDir);
  let codegen: Promise<Codegen> | undefined;
  return {
    roots,
    async tools() {
      await ensureTypeScript();
      const { loadToolCatalog } = await loadCodegen();
      return loadToolCatalog(roots.rootDir);
    },
    codegen() {
      // Clean checks are kept for `flowing codegen` too: after Generate in the studio, it need not check again.
      codegen ??= loadCodegen().then(({ createCodegen }) => createCodegen({ rootDir: roots.rootDir, persistTypeCheck: true }));
      return codegen;
    },
    serial: createKeyedQueue(),
    checkCase: options.checkCase,
    dispose() {
      void codegen?.then((instance) => instance.dispose());
      codegen = undefined;
    },
  };
}
