// Both servers the studio talks to answer failures in one shape, and the studio reads them with one parser.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isFlowError } from '@flowing/protocol';
import { createMemoryStore, createRuntime, type Runtime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { startStudio, type StudioServer } from '@flowing/studio/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { ApiError, errorFromAnswer, hasCode, request } from '../../studio/src/api-error.ts';
import { runtimeClient } from '../../studio/src/inspect/runtime-client.ts';
import { copyProject } from '../helpers/project.ts';

let studio: StudioServer;
let runtime: Runtime;
let project: { dir: string; remove(): Promise<void> };
let sessionId: string;

beforeAll(async () => {
  project = await copyProject('flowing-error-shape-');
  runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
  sessionId = (await runtime.createSession(orderSupport, { userId: 'u-ada' })).id;
  const server = createServer(runtime, { log: () => {} });
  studio = await startStudio({
    rootDir: project.dir,
    appDir: inject('studioAppDir'),
    port: 0,
    host: '127.0.0.1',
    runtimeApp: { fetch: server.fetch },
  });
});

afterAll(async () => {
  await studio?.close();
  await project?.remove();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A spec saved over a file that changed on disk since it was loaded: 409 STUDIO_CONFLICT with the version now. */
async function staleSave(): Promise<{ url: string; init: RequestInit; currentVersion: string }> {
  const file = join(project.dir, 'machines/incident-triage/incident-triage.flow.json');
  const loaded = await readFile(file, 'utf8');
  const edited = `${loaded}\n`;
  await writeFile(file, edited);
  return {
    url: `${studio.url}api/machines/incident-triage`,
    init: {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spec: JSON.parse(loaded), baseVersion: sha256(loaded) }),
    },
    currentVersion: sha256(edited),
  };
}

describe('error answers', () => {
  it('are { code, message, details? } and nothing else, from the studio server and from the runtime it mounts', async () => {
    const stale = await staleSave();
    const refusals: Array<[string, RequestInit, number, string]> = [
      [`${studio.url}api/machines/no-such-machine`, {}, 404, 'STUDIO_NOT_FOUND'],
      [stale.url, stale.init, 409, 'STUDIO_CONFLICT'],
      [
        `${studio.url}api/machines`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"class"}' },
        400,
        'STUDIO_BAD_MACHINE_ID',
      ],
      [`${studio.url}api/runtime/sessions/no-such-session`, {}, 404, 'SESSION_NOT_FOUND'],
      [`${studio.url}api/runtime/sessions/${sessionId}/at/99`, {}, 404, 'INSPECT_SEQ_OUT_OF_RANGE'],
      [
        `${studio.url}api/runtime/sessions`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"machine":1}' },
        400,
        'SERVER_BAD_REQUEST',
      ],
    ];
    for (const [url, init, status, code] of refusals) {
      const response = await fetch(url, init);
      const body = (await response.json()) as Record<string, unknown>;
      expect({ url, status: response.status, code: body.code }).toEqual({ url, status, code });
      expect(isFlowError(body)).toBe(true);
      expect(Object.keys(body).filter((key) => !['code', 'message', 'details'].includes(key))).toEqual([]);
      if ('details' in body) expect(typeof body.details).toBe('object');
    }
  });

  it('are read by the one parser into the server, status, code and details, from either server', async () => {
    const stale = await staleSave();
    const conflict = await request('studio', 'the studio server', stale.url, stale.init).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(ApiError);
    expect(conflict).toMatchObject({
      server: 'studio',
      status: 409,
      code: 'STUDIO_CONFLICT',
      details: { currentVersion: stale.currentVersion },
    });
    expect(hasCode(conflict, 'STUDIO_CONFLICT')).toBe(true);

    const client = runtimeClient({ baseUrl: `${studio.url}api/runtime` });
    const missing = await client.getSession('no-such-session').catch((error: unknown) => error);
    expect(missing).toMatchObject({ server: 'runtime', status: 404, code: 'SESSION_NOT_FOUND' });
    const outOfRange = await request('runtime', 'the runtime', `${studio.url}api/runtime/sessions/${sessionId}/at/99`, {}).catch(
      (error: unknown) => error,
    );
    expect(outOfRange).toMatchObject({
      server: 'runtime',
      status: 404,
      code: 'INSPECT_SEQ_OUT_OF_RANGE',
      details: { seq: 99, lastSeq: expect.any(Number) },
    });
  });

  it('take a refused send as an answer, and a failure without the shape as <SERVER>_BAD_RESPONSE', async () => {
    const client = runtimeClient({ baseUrl: `${studio.url}api/runtime` });
    expect(await client.sendEvent(sessionId, { type: 'NO_SUCH_EVENT' })).toMatchObject({ applied: false, code: 'UNKNOWN_EVENT' });
    expect(errorFromAnswer('runtime', 502, '<html>Bad Gateway</html>')).toMatchObject({
      server: 'runtime',
      status: 502,
      code: 'RUNTIME_BAD_RESPONSE',
    });
    expect(errorFromAnswer('studio', 500, '{"error":"boom"}')).toMatchObject({
      server: 'studio',
      status: 500,
      code: 'STUDIO_BAD_RESPONSE',
    });
  });
});
