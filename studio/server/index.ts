export { startStudio, studioCommand, type StudioServer } from './cli.ts';
export { DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT, studioViteConfig, type StudioConfigOptions } from './config.ts';
