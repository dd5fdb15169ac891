import { defineConfig } from 'vite';
import { DEFAULT_STUDIO_PORT } from './studio/server/constants.ts';
import { studioViteConfig } from './studio/server/vite-config.ts';
import { checkCase } from './bin/studio/case-checker.ts';

// The studio app (root studio/): `vite build` writes the prebuilt app to studio/dist/app, which `flowing studio`
// serves; `npm run dev:studio` (`vite`) serves the sources with HMR and mounts the same API through the plugin.
const { configFile: _inline, ...config } = studioViteConfig({
  rootDir: process.cwd(),
  host: process.env.HOST || undefined,
  port: Number(process.env.PORT || DEFAULT_STUDIO_PORT),
  checkCase,
});

export default defineConfig(config);
