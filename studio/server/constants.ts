import { fileURLToPath } from 'node:url';

/** The default port of the studio (`PORT` overrides it). */
export const DEFAULT_STUDIO_PORT = 5173;
/** The default host: loopback only (`HOST` overrides it). */
export const DEFAULT_STUDIO_HOST = '127.0.0.1';

/**
 * The built app (`vite build` output) shipped in this package: `<package>/dist/app`, found from this module both when
 * it runs from the sources (`server/constants.ts`) and from the build (`dist/server/constants.js`).
 */
export const BUILT_APP_DIR = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../dist/app/' : '../app/', import.meta.url));
