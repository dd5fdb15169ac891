// Vitest globalSetup: builds the studio app from the current sources once per test run, so every test that serves
// the studio exercises today's code and never a stale studio/dist/app.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import { studioViteConfig } from '@flowing/studio/dev';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The studio app built from the current sources for this test run. */
    studioAppDir: string;
  }
}

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
/** Everything `vite build` of the studio reads from the repository: the app, its Vite config, spec/, protocol/, the lock. */
const INPUT_FOLDERS = ['studio/src', 'studio/public', 'spec', 'protocol'];
const INPUT_FILES = [
  'studio/index.html',
  'studio/package.json',
  'studio/server/vite-config.ts',
  'studio/server/constants.ts',
  'package-lock.json',
  'vite.config.ts',
];
const SKIPPED = new Set(['dist', 'node_modules']);
const CACHE_PREFIX = 'flowing-studio-app-';
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

async function listFiles(dir: string, into: string[]): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await listFiles(path, into);
    else if (entry.isFile()) into.push(path);
  }
  return into;
}

/** A hash of every input of the build (paths and bytes): equal hashes mean an identical build. */
async function inputsHash(): Promise<string> {
  const files = [...INPUT_FILES.map((name) => join(REPO_DIR, name))];
  for (const folder of INPUT_FOLDERS) if (existsSync(join(REPO_DIR, folder))) await listFiles(join(REPO_DIR, folder), files);
  const hash = createHash('sha256').update('production\0');
  for (const file of files.sort())
    hash
      .update(relative(REPO_DIR, file))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  return hash.digest('hex').slice(0, 20);
}

/** Removes builds of older sources that nobody used for a day (several checkouts may share the temp folder). */
async function pruneOldBuilds(keep: string): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    if (!name.startsWith(CACHE_PREFIX) || join(tmpdir(), name) === keep) continue;
    const path = join(tmpdir(), name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_AFTER_MS) await rm(path, { recursive: true, force: true });
  }
}

/**
 * Builds the app into a temporary folder named by the hash of its inputs; a run whose sources did not change reuses
 * the folder (the build is written beside it and renamed, so concurrent runs never see half a build).
 */
export async function buildStudioApp(): Promise<string> {
  const dir = join(tmpdir(), `${CACHE_PREFIX}${await inputsHash()}`);
  if (!existsSync(join(dir, 'index.html'))) {
    const partial = `${dir}.${process.pid}.partial`;
    const started = performance.now();
    // Vitest sets NODE_ENV=test, and Vite builds React's development runtime (jsxDEV, owner stacks) for any NODE_ENV
    // but production: the app under test must be the production build users get from `npm run build`.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({
        ...studioViteConfig({ rootDir: REPO_DIR, outDir: partial, logLevel: 'error' }),
        build: { outDir: partial, emptyOutDir: true, reportCompressedSize: false },
      });
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = nodeEnv;
    }
    await rename(partial, dir).catch(async () => {
      // Another run finished the same build first; its folder is identical.
      await rm(partial, { recursive: true, force: true });
    });
    console.log(`[studio] built the app for tests in ${Math.round(performance.now() - started)} ms`);
  }
  await pruneOldBuilds(dir).catch(() => undefined);
  return dir;
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('studioAppDir', await buildStudioApp());
}
