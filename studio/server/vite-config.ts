import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import type { InlineConfig } from 'vite';
import { DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT } from './constants.ts';
import { allowedHostnames } from './guard.ts';
import type { CaseChecker } from './cases.ts';
import { studioApiPlugin } from './vite-plugin.ts';

// Development only: the app's sources (index.html, src/), spec/ and protocol/ exist in the repository, not in the package.
const STUDIO_DIR = fileURLToPath(new URL('../', import.meta.url));
const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

export interface StudioConfigOptions {
  /** The project whose machines/ and tools/ the studio edits. */
  rootDir: string;
  port?: number;
  host?: string;
  logLevel?: 'info' | 'warn' | 'error' | 'silent';
  /** The studio app folder Vite serves (default: studio/); tests point it at a scratch copy. */
  appDir?: string;
  /** Vite's dependency cache (default node_modules/.vite); test servers use their own so they never race a running studio. */
  cacheDir?: string;
  /** Where `vite build` writes the app (default studio/dist/app, which the package ships). */
  outDir?: string;
  /** Checks a recorded case before "Save as case" writes it (see StudioApiOptions). */
  checkCase?: CaseChecker;
}

/**
 * The Vite configuration of the studio app, for `vite build` (studio/dist/app) and for `npm run dev:studio` (HMR,
 * with the API plugin): a dev server that serves only the studio, spec/, protocol/ and node_modules, never secrets, and answers
 * only to its own Host and Origin.
 * @example await createServer(studioViteConfig({ rootDir: process.cwd(), port: 0 }))
 */
export function studioViteConfig(options: StudioConfigOptions): InlineConfig {
  const host = options.host ?? DEFAULT_STUDIO_HOST;
  const appDir = options.appDir ?? STUDIO_DIR;
  return {
    configFile: false,
    root: appDir,
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    logLevel: options.logLevel ?? 'info',
    clearScreen: false,
    plugins: [react(), studioApiPlugin({ rootDir: options.rootDir, checkCase: options.checkCase })],
    resolve: {
      alias: [
        { find: /^@flowing\/spec$/, replacement: `${REPO_DIR}spec/index.ts` },
        { find: /^@flowing\/protocol$/, replacement: `${REPO_DIR}protocol/index.ts` },
      ],
    },
    // elkjs (1.6 MB) is its own chunk, loaded only when a machine needs a layout: no warning for it.
    build: { outDir: options.outDir ?? `${STUDIO_DIR}dist/app`, emptyOutDir: true, chunkSizeWarningLimit: 2048 },
    // Pre-bundle what the app imports lazily too, so a stale cache never answers "Outdated Optimize Dep" mid-session.
    optimizeDeps: { include: ['elkjs/lib/elk.bundled.js', 'diff', '@xyflow/react', 'zustand', 'react', 'react-dom/client'] },
    server: {
      host,
      port: options.port ?? DEFAULT_STUDIO_PORT,
      strictPort: false,
      // The studio is same-origin; no other page may read its responses.
      cors: false,
      allowedHosts: allowedHostnames(host).map((name) => name.replace(/^\[|\]$/g, '')),
      fs: {
        strict: true,
        allow: [appDir, `${REPO_DIR}spec`, `${REPO_DIR}protocol`, `${REPO_DIR}node_modules`],
        deny: ['.env', '.env.*', '*.{crt,pem,key,p12,pfx}', '**/.git/**', '**/.flowing/**', '**/.npmrc'],
      },
    },
  };
}
