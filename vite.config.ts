import { defineConfig } from 'vite';
import { DEFAULT_STUDIO_PORT, studioViteConfig } from './studio/server/config.ts';

// The studio app (root studio/) with its API plugin (studio/server). `flowing studio` builds the same configuration
// in code; this file serves `npx vite` and tools that read a Vite config.
const { configFile: _inline, ...config } = studioViteConfig({
  rootDir: process.cwd(),
  host: process.env.HOST || undefined,
  port: Number(process.env.PORT || DEFAULT_STUDIO_PORT),
});

export default defineConfig(config);
