export { startStudio, hostForUrl, type StudioOptions, type StudioServer } from './server.ts';
export { studioCommand } from './cli.ts';
export { createStudioApp, type StudioApp, type StudioAppOptions } from './app.ts';
export { createStudioContext, type StudioContext } from './context.ts';
export { BUILT_APP_DIR, DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT } from './constants.ts';
export { STUDIO_ERROR_CODES, StudioError, errorResponse, type StudioErrorCode } from './errors.ts';
export { RUNTIME_PREFIX, type RuntimeApp, type RuntimeAppSource } from './runtime-mount.ts';
export { loadServedSessionFile, SESSION_FILE_PREFIX, type ServedSessionFile } from './session-file-route.ts';
export type { CaseChecker } from './cases.ts';
