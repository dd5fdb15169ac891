import { cp, mkdtemp, rm, symlink, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStudio } from '../../studio/server/cli.ts';

/** The repository root. */
export const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

export interface StudioTestServer {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  /** The project the server edits (a temporary copy unless `rootDir` was given). */
  rootDir: string;
  /** Stops the server and removes the temporary copy it made. */
  close(): Promise<void>;
}

/**
 * Copies the project files the studio edits (machines/, tools/) into a fresh temporary folder that still resolves
 * `zod`, `xstate` and `flowing/runtime` like the repository does (node_modules, spec/, runtime/ and codegen/ are
 * symlinked, package.json and tsconfig.json copied), so tests never dirty the repository.
 */
export async function copyProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flowing-studio-'));
  await cp(join(REPO_DIR, 'machines'), join(dir, 'machines'), { recursive: true });
  await cp(join(REPO_DIR, 'tools'), join(dir, 'tools'), { recursive: true });
  for (const name of ['node_modules', 'spec', 'runtime', 'codegen']) await symlink(join(REPO_DIR, name), join(dir, name), 'dir');
  for (const name of ['package.json', 'tsconfig.json']) await writeFile(join(dir, name), await readFile(join(REPO_DIR, name)));
  return dir;
}

/**
 * Starts the real studio dev server on 127.0.0.1 and a free port, against `rootDir` or a temporary copy of the project.
 * @example const studio = await startStudioServer(); await fetch(`${studio.url}api/machines`); await studio.close();
 */
export async function startStudioServer(options: { rootDir?: string } = {}): Promise<StudioTestServer> {
  const rootDir = options.rootDir ?? (await copyProject());
  const studio = await startStudio({ rootDir, port: 0, host: '127.0.0.1', logLevel: 'warn' });
  return {
    url: studio.url,
    port: studio.port,
    rootDir,
    async close() {
      await studio.close();
      if (!options.rootDir) await rm(rootDir, { recursive: true, force: true });
    },
  };
}
