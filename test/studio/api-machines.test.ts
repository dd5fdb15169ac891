// "New machine" and "Delete machine" through the studio API (POST /api/machines, DELETE /api/machines/:id).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_SCHEMA_REFERENCE } from '@flowing/codegen';
import { formatSpec, validateSpec } from '@flowing/spec';
import { treeHashes } from '../helpers/project.ts';
import { sendRaw, startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

let studio: StudioTestServer;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const specPath = (id: string) => join(studio.rootDir, 'machines', id, `${id}.flow.json`);
const send = (method: string, path: string, body?: unknown) => sendRaw(studio.port, method, path, {}, body);

const snapshot = (dir: string) => treeHashes(dir);

beforeAll(async () => {
  studio = await startStudioServer();
});
afterAll(async () => {
  await studio?.close();
});

describe('POST /api/machines (New machine)', () => {
  it('creates machines/<id>/<id>.flow.json with one initial state (201), valid and listed', async () => {
    const created = await send('POST', '/api/machines', { id: 'refund-desk' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ id: 'refund-desk', file: 'machines/refund-desk/refund-desk.flow.json' });
    const text = await readFile(specPath('refund-desk'), 'utf8');
    const spec = JSON.parse(text);
    expect(text).toBe(formatSpec(spec));
    expect(created.json.version).toBe(sha256(text));
    expect(spec).toMatchObject({ specVersion: 1, id: 'refund-desk', initial: 'idle' });
    // The skeleton `flowing init` and codegen share: editors validate the new spec against the JSON Schema.
    expect(spec.$schema).toBe(SPEC_SCHEMA_REFERENCE);
    expect(Object.keys(spec.states)).toEqual(['idle']);
    expect(validateSpec(spec).problems.filter((p) => p.severity === 'error')).toEqual([]);

    const listed = await send('GET', '/api/machines');
    expect(listed.json.machines.map((m: { id: string }) => m.id)).toContain('refund-desk');
    const loaded = await send('GET', '/api/machines/refund-desk');
    expect(loaded.status).toBe(200);
    expect(loaded.json.version).toBe(created.json.version);
  });

  it('refuses an id that is already a machine with 409 STUDIO_MACHINE_EXISTS and leaves its spec untouched', async () => {
    const before = await readFile(specPath('order-support'));
    const again = await send('POST', '/api/machines', { id: 'order-support' });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('STUDIO_MACHINE_EXISTS');
    expect(again.json.message).toContain('order-support');
    expect(await readFile(specPath('order-support'))).toEqual(before);
  });

  const HOSTILE: Array<[unknown, string]> = [
    ['../x', 'SPEC_INVALID_ID'],
    ['..', 'SPEC_INVALID_ID'],
    ['a/../../x', 'SPEC_INVALID_ID'],
    ['/etc/passwd', 'SPEC_INVALID_ID'],
    ['..\\x', 'SPEC_INVALID_ID'],
    ['C:\\x', 'SPEC_INVALID_ID'],
    ['%2e%2e%2fx', 'SPEC_INVALID_ID'],
    ['x\u0000', 'SPEC_INVALID_ID'],
    ['x/y', 'SPEC_INVALID_ID'],
    ['x.flow.json', 'SPEC_INVALID_ID'],
    ['Order-Support', 'SPEC_INVALID_ID'],
    ['ORDER', 'SPEC_INVALID_ID'],
    ['order_support', 'SPEC_INVALID_ID'],
    ['-x', 'SPEC_INVALID_ID'],
    ['x-', 'SPEC_INVALID_ID'],
    ['a--b', 'SPEC_INVALID_ID'],
    ['1st', 'SPEC_INVALID_ID'],
    [' x', 'SPEC_INVALID_ID'],
    ['x\n', 'SPEC_INVALID_ID'],
    ['x'.repeat(65), 'SPEC_INVALID_ID'],
    ['', 'SPEC_INVALID_ID'],
    [42, 'SPEC_INVALID_ID'],
    [null, 'SPEC_INVALID_ID'],
    [['x'], 'SPEC_INVALID_ID'],
    ['class', 'SPEC_RESERVED_NAME'],
    ['default', 'SPEC_RESERVED_NAME'],
    ['import', 'SPEC_RESERVED_NAME'],
    ['export', 'SPEC_RESERVED_NAME'],
    ['await', 'SPEC_RESERVED_NAME'],
    ['yield', 'SPEC_RESERVED_NAME'],
    ['constructor', 'SPEC_RESERVED_NAME'],
  ];

  it.each(HOSTILE)('refuses the id %j with 400 STUDIO_BAD_MACHINE_ID (%s) and writes nothing', async (id, problem) => {
    const before = await snapshot(studio.rootDir);
    const response = await send('POST', '/api/machines', { id });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('STUDIO_BAD_MACHINE_ID');
    expect(response.json.details.problem).toBe(problem);
    expect(await snapshot(studio.rootDir)).toEqual(before);
  });

  it('accepts the longest id the validator allows (64 characters)', async () => {
    const id = `m${'x'.repeat(63)}`;
    const response = await send('POST', '/api/machines', { id });
    expect(response.status).toBe(201);
    expect(existsSync(specPath(id))).toBe(true);
  });

  it('refuses a body without an id object with 400 STUDIO_BAD_REQUEST', async () => {
    for (const body of [[], 'refund-desk', null]) {
      const response = await send('POST', '/api/machines', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.json.code).toBe('STUDIO_BAD_REQUEST');
    }
  });

  it('never creates through a machine folder that is a symlink leading out of machines/ (400 STUDIO_BAD_PATH)', async () => {
    await mkdir(join(studio.rootDir, 'outside-new'), { recursive: true });
    await symlink(join(studio.rootDir, 'outside-new'), join(studio.rootDir, 'machines', 'escape-hatch'));
    const response = await send('POST', '/api/machines', { id: 'escape-hatch' });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('STUDIO_BAD_PATH');
    expect(await readdir(join(studio.rootDir, 'outside-new'))).toEqual([]);
  });
});

describe('DELETE /api/machines/:id (Delete machine)', () => {
  /** A machine with a spec, both generated files and a hand-written impl.ts; returns its version. */
  async function plantMachine(id: string, withImpl: boolean): Promise<string> {
    const created = await send('POST', '/api/machines', { id });
    expect(created.status).toBe(201);
    await writeFile(join(studio.rootDir, 'machines', id, `${id}.machine.ts`), '// generated\n');
    await writeFile(join(studio.rootDir, 'machines', id, `${id}.registry.ts`), '// generated\n');
    if (withImpl) await writeFile(join(studio.rootDir, 'machines', id, `${id}.impl.ts`), '// hand-written\n');
    return created.json.version as string;
  }

  it('removes the spec and its generated files, keeps a hand-written impl.ts and says so', async () => {
    const version = await plantMachine('to-delete', true);
    const response = await send('DELETE', '/api/machines/to-delete', { baseVersion: version });
    expect(response.status).toBe(200);
    expect(response.json.removed).toEqual([
      'machines/to-delete/to-delete.machine.ts',
      'machines/to-delete/to-delete.registry.ts',
      'machines/to-delete/to-delete.flow.json',
    ]);
    expect(response.json.kept).toEqual(['machines/to-delete/to-delete.impl.ts']);
    expect(await readdir(join(studio.rootDir, 'machines', 'to-delete'))).toEqual(['to-delete.impl.ts']);
    expect(await readFile(join(studio.rootDir, 'machines', 'to-delete', 'to-delete.impl.ts'), 'utf8')).toBe('// hand-written\n');
    const listed = await send('GET', '/api/machines');
    expect(listed.json.machines.map((m: { id: string }) => m.id)).not.toContain('to-delete');
    // The id is free again; the kept impl.ts stays where the new machine will use it.
    expect((await send('POST', '/api/machines', { id: 'to-delete' })).status).toBe(201);
  });

  it('removes the folder when nothing hand-written is left in it', async () => {
    const version = await plantMachine('gone-entirely', false);
    const response = await send('DELETE', '/api/machines/gone-entirely', { baseVersion: version });
    expect(response.status).toBe(200);
    expect(response.json.kept).toEqual([]);
    expect(existsSync(join(studio.rootDir, 'machines', 'gone-entirely'))).toBe(false);
  });

  it('refuses with 409 STUDIO_CONFLICT when the spec changed on disk since it was loaded, removing nothing', async () => {
    const version = await plantMachine('changed-meanwhile', false);
    const edited = (await readFile(specPath('changed-meanwhile'), 'utf8')).replace('"idle"', '"idle" ');
    await writeFile(specPath('changed-meanwhile'), edited);
    const before = await snapshot(studio.rootDir);
    const response = await send('DELETE', '/api/machines/changed-meanwhile', { baseVersion: version });
    expect(response.status).toBe(409);
    expect(response.json.code).toBe('STUDIO_CONFLICT');
    expect(response.json.details.currentVersion).toBe(sha256(edited));
    expect(await snapshot(studio.rootDir)).toEqual(before);
  });

  it('answers 404 STUDIO_NOT_FOUND for a machine that does not exist', async () => {
    const response = await send('DELETE', '/api/machines/no-such-machine', { baseVersion: '0'.repeat(64) });
    expect(response.status).toBe(404);
    expect(response.json.code).toBe('STUDIO_NOT_FOUND');
  });

  it('refuses a delete without the loaded version with 400 STUDIO_BAD_REQUEST', async () => {
    const before = await readFile(specPath('order-support'));
    for (const body of [undefined, {}, { baseVersion: 'abc' }, { baseVersion: null }]) {
      const response = await send('DELETE', '/api/machines/order-support', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.json.code).toBe(body === undefined ? 'STUDIO_BAD_JSON' : 'STUDIO_BAD_REQUEST');
    }
    expect(await readFile(specPath('order-support'))).toEqual(before);
  });

  it.each(['..', '../x', '..%2fx', '%2e%2e', 'Order-Support', 'ORDER', 'order_support', 'x'.repeat(65), 'a%00', 'order-support%2f..'])(
    'refuses the URL id %j with 400 STUDIO_BAD_PATH and removes nothing',
    async (segment) => {
      const before = await snapshot(studio.rootDir);
      const response = await send('DELETE', `/api/machines/${segment}`, { baseVersion: '0'.repeat(64) });
      expect(response.status).toBe(400);
      expect(response.json.code).toBe('STUDIO_BAD_PATH');
      expect(await snapshot(studio.rootDir)).toEqual(before);
    },
  );

  it('never deletes through a machine folder that is a symlink leading out of machines/ (400 STUDIO_BAD_PATH)', async () => {
    await mkdir(join(studio.rootDir, 'outside-del', 'victim'), { recursive: true });
    const text = formatSpec({ specVersion: 1, id: 'victim', events: {}, initial: 'a', states: { a: {} } } as never);
    await writeFile(join(studio.rootDir, 'outside-del', 'victim', 'victim.flow.json'), text);
    await writeFile(join(studio.rootDir, 'outside-del', 'victim', 'victim.machine.ts'), '// outside\n');
    await symlink(join(studio.rootDir, 'outside-del', 'victim'), join(studio.rootDir, 'machines', 'victim'));
    const response = await send('DELETE', '/api/machines/victim', { baseVersion: sha256(text) });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('STUDIO_BAD_PATH');
    expect((await readdir(join(studio.rootDir, 'outside-del', 'victim'))).sort()).toEqual(['victim.flow.json', 'victim.machine.ts']);
  });
});
