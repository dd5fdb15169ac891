import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import type { InlineConfig } from 'vite';
import { allowedHostnames } from './guard.ts';
import { studioApiPlugin } from './plugin.ts';

/** The package's own folder (the studio app, spec/ and node_modules live here; the edited project may be elsewhere). */
export const PACKAGE_DIR = fileURLToPath(new URL('../../', import.meta.url));
const at = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** The default port of the studio (`PORT` overrides it). */
export const DEFAULT_STUDIO_PORT = 5173;
/** The default host: loopback only (`HOST` overrides it). */
export const DEFAULT_STUDIO_HOST = '127.0.0.1';

export interface StudioConfigOptions {
  /** The project whose machines/ and tools/ the studio edits. */
  rootDir: string;
  port?: number;
  host?: string;
  logLevel?: 'info' | 'warn' | 'error' | 'silent';
  /** The studio app folder Vite serves (default: this package's studio/); tests point it at a scratch copy. */
  appDir?: string;
  /** Vite's dependency cache (default node_modules/.vite); test servers use their own so they never race a running studio. */
  cacheDir?: string;
}

/**
 * The Vite configuration of the studio: the React app in studio/, the API plugin, and a dev server that serves only
 * the studio, spec/ and node_modules, never secrets, and answers only to its own Host and Origin.
 * @example await createServer(studioViteConfig({ rootDir: process.cwd(), port: 0 }))
 */
export function studioViteConfig(options: StudioConfigOptions): InlineConfig {
  const host = options.host ?? DEFAULT_STUDIO_HOST;
  const appDir = options.appDir ?? at('studio');
  return {
    configFile: false,
    root: appDir,
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    logLevel: options.logLevel ?? 'info',
    clearScreen: false,
    plugins: [react(), studioApiPlugin({ rootDir: options.rootDir })],
    resolve: {
      alias: [{ find: /^@flowing\/spec$/, replacement: at('spec/index.ts') }],
    },
    build: { outDir: 'dist/app', emptyOutDir: true },
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
        allow: [appDir, at('spec'), at('node_modules')],
        deny: ['.env', '.env.*', '*.{crt,pem,key,p12,pfx}', '**/.git/**', '**/.flowing/**', '**/.npmrc'],
      },
    },
  };
}
