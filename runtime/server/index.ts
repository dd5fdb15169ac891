export { createServer, type FlowingServerApp } from './create-server.ts';
export { startServer, isLoopbackHost, type StartServerOptions, type RunningServer } from './listen.ts';
export type { ServerOptions } from './options.ts';
export type { ServerLogger, ServerLogEntry } from './log.ts';
export type { RateSpec } from './rate-limit.ts';
export type { SessionView } from './session-view.ts';
export { ServerError, SERVER_ERROR_CODES, RUNTIME_CODE_STATUS, statusOf, type ServerErrorCode } from './errors.ts';
export { DEFAULT_HOST, DEFAULT_PORT } from './constants.ts';
export { recoverSessions, type RecoveryReport } from './recover.ts';
