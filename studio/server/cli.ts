import type { CaseChecker } from './cases.ts';
import { DEFAULT_STUDIO_HOST, DEFAULT_STUDIO_PORT } from './constants.ts';
import { StudioError } from './errors.ts';
import type { RuntimeAppSource } from './runtime-mount.ts';
import type { ServedSessionFile } from './session-file-route.ts';
import { startStudio, type StudioServer } from './server.ts';

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`port ${JSON.stringify(value)} is not a number from 0 to 65535`);
  return port;
}

/**
 * `flowing studio`: serves the prebuilt studio for the project in the current directory, on `PORT` (default 5173)
 * and `HOST` (default 127.0.0.1), and prints its URL. A start that fails with a studio code prints it and sets
 * the exit code 1 (undefined is returned). `runtimeApp` is the runtime API mounted under `/api/runtime` (the CLI
 * passes one over the project's generated machines and `.flowing/sessions.db`); `sessionFile` is served to the page
 * for `flowing inspect FILE`; `checkCase` checks a case before "Save as case" writes it; `appDir` replaces the built
 * app (tests serve the one built from the current sources).
 */
export async function studioCommand(
  options: {
    port?: string;
    host?: string;
    runtimeApp?: RuntimeAppSource;
    sessionFile?: ServedSessionFile;
    appDir?: string;
    checkCase?: CaseChecker;
  } = {},
): Promise<StudioServer | undefined> {
  const port = parsePort(options.port) ?? parsePort(process.env.PORT) ?? DEFAULT_STUDIO_PORT;
  const host = options.host ?? (process.env.HOST || DEFAULT_STUDIO_HOST);
  let studio: StudioServer;
  try {
    studio = await startStudio({
      rootDir: process.cwd(),
      port,
      host,
      runtimeApp: options.runtimeApp,
      sessionFile: options.sessionFile,
      appDir: options.appDir,
      checkCase: options.checkCase,
    });
  } catch (error) {
    if (!(error instanceof StudioError)) throw error;
    process.stderr.write(`flowing studio: ${error.code} ${error.message}\n`);
    process.exitCode = 1;
    return undefined;
  }
  process.stdout.write(`Flowing studio: ${studio.url}\n`);
  const stop = (): void => {
    void studio.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return studio;
}
