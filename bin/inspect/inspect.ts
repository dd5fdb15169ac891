import { resolve } from 'node:path';
import type { RuntimeAppSource, StudioServer } from '@flowing/studio/server';
import { ensureTypeScriptLoader } from '../typescript-loader.ts';
import { InspectFileError, readSessionHeader } from './header.ts';

export interface InspectOptions {
  port?: string;
  host?: string;
  /** The runtime mounted under `/api/runtime` (default: the project's, as `flowing studio` mounts it). */
  runtimeApp?: RuntimeAppSource;
  /** The built studio app to serve (default: the one shipped in @flowing/studio). */
  appDir?: string;
}

/** The page URL that opens the studio on the served file: `?inspect=<path>` and the file's machine as the hash. */
export function inspectPageUrl(studioUrl: string, urlPath: string, machineId: string): string {
  return `${studioUrl}?inspect=${encodeURIComponent(urlPath)}#${encodeURIComponent(machineId)}`;
}

/**
 * `flowing inspect FILE`: starts the studio on the project in the current directory (as `flowing studio` does) and
 * serves FILE, a session export, to its page at an unguessable path; prints the URL that opens the Inspect view on
 * it, offline (the list, the graph states and the scrubber come from the file). A file that is not a session export
 * is refused before the studio starts, with its code; exit code 1.
 * @returns the running studio and the page URL, or undefined when it did not start (the exit code is set)
 */
export async function inspectCommand(
  file: string,
  options: InspectOptions = {},
): Promise<{ studio: StudioServer; pageUrl: string } | undefined> {
  const { loadServedSessionFile, studioCommand, StudioError } = await import('@flowing/studio/server');
  const path = resolve(file);
  let served;
  let summary;
  try {
    served = await loadServedSessionFile(path);
    summary = readSessionHeader(served.text);
  } catch (error) {
    if (error instanceof InspectFileError) {
      process.stderr.write(`flowing inspect: ${error.code} ${file}: ${error.message}\n`);
    } else if (error instanceof StudioError) {
      process.stderr.write(
        `flowing inspect: ${error.code === 'STUDIO_NOT_FOUND' ? 'INSPECT_FILE_NOT_FOUND' : error.code} ${error.message}\n`,
      );
    } else {
      throw error;
    }
    process.exitCode = 1;
    return undefined;
  }
  const runtimeApp =
    options.runtimeApp ??
    (async () => {
      await ensureTypeScriptLoader();
      const { createStudioRuntimeApp } = await import('../studio/runtime-app.ts');
      return createStudioRuntimeApp();
    });
  const { checkCase } = await import('../studio/case-checker.ts');
  const studio = await studioCommand({
    port: options.port,
    host: options.host,
    runtimeApp,
    sessionFile: served,
    appDir: options.appDir,
    checkCase,
  });
  if (!studio) return undefined;
  const events = summary.events === undefined ? '' : `, ${summary.events} events`;
  const pageUrl = inspectPageUrl(studio.url, served.urlPath, summary.machineId);
  process.stdout.write(`Inspecting ${file} (session ${summary.sessionId} of ${summary.machineId}${events}): ${pageUrl}\n`);
  return { studio, pageUrl };
}
