// RELIABILITY X1: the studio API reads and writes only inside machines/ and tools/.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSpec } from '../../spec/index.ts';
import { sendRaw, startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

let studio: StudioTestServer;
let root: string;
let before: Map<string, string>;

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const tinySpec = (id: string) => ({
  specVersion: 1,
  id,
  events: { GO: {} },
  initial: 'a',
  states: { a: { on: { GO: 'b' } }, b: { type: 'final' } },
});

/** Hashes every file and symlink under the project root except inside machines/ and tools/ (symlinks are not followed). */
async function snapshotOutside(dir: string, into = new Map<string, string>()): Promise<Map<string, string>> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const rel = relative(root, path);
    if (rel === 'machines' || rel === 'tools') continue;
    const stat = await lstat(path);
    if (stat.isSymbolicLink()) into.set(rel, `link:${await readlink(path)}`);
    else if (stat.isDirectory()) await snapshotOutside(path, into);
    else into.set(rel, sha256(await readFile(path)));
  }
  return into;
}

const send = (method: string, path: string, body?: unknown) => sendRaw(studio.port, method, path, {}, body);

beforeAll(async () => {
  studio = await startStudioServer();
  root = studio.rootDir;
  // A machine folder that is a symlink leading out of the project.
  await mkdir(join(root, 'outside', 'evil'), { recursive: true });
  await writeFile(join(root, 'outside', 'evil', 'evil.flow.json'), formatSpec(tinySpec('evil')));
  await symlink(join(root, 'outside', 'evil'), join(root, 'machines', 'evil'));
  // A spec file that is a symlink to a file outside.
  await writeFile(join(root, 'outside', 'secret.flow.json'), formatSpec(tinySpec('leak')));
  await mkdir(join(root, 'machines', 'leak'));
  await symlink(join(root, 'outside', 'secret.flow.json'), join(root, 'machines', 'leak', 'leak.flow.json'));
  // A sibling folder whose name starts with the machines/ root's own path.
  await mkdir(join(root, 'machines-evil', 'sib'), { recursive: true });
  await writeFile(join(root, 'machines-evil', 'sib', 'sib.flow.json'), formatSpec(tinySpec('sib')));
  await symlink('../machines-evil/sib', join(root, 'machines', 'sib'));
  // A tool file that is a symlink leading out.
  await writeFile(join(root, 'outside', 'linked.ts'), 'export const linked = 1;\n');
  await symlink(join(root, 'outside', 'linked.ts'), join(root, 'tools', 'linked.ts'));
  before = await snapshotOutside(root);
});

afterAll(async () => {
  await studio?.close();
});

/** Spellings of "somewhere else" for a machine id in the URL; every one must be refused with 400 STUDIO_BAD_PATH. */
const BAD_SEGMENTS = [
  '..',
  '.',
  '../x',
  '..%2fx',
  '..%2Fx',
  '%2e%2e/x',
  '%2e%2e%2fx',
  '%2E%2E%2Fx',
  '%252e%252e%252fx',
  '.%2e/x',
  '..%5cx',
  '..\\x',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  'C:\\x',
  'C:%5Cx',
  'C:/x',
  'c%3a%5cx',
  '\\\\host\\x',
  '%5c%5chost%5cx',
  'a/../../x',
  'order-support/../../x',
  'order-support%2f..%2f..%2fpackage.json',
  'x%00',
  'order-support%00.flow.json',
  'x#y',
  'order-support.',
  'order-support%2e',
  'order-support%20',
  'order-support%09',
  'Order-Support',
  'ORDER-SUPPORT',
  'order_support',
  'order-support.flow.json',
  'order-support.ts',
  '%c0%ae%c0%ae%c0%af',
  '%ef%bc%8e%ef%bc%8e%ef%bc%8f',
  '~',
  '%7e',
  'order-support%3a%3a%24DATA',
  'x'.repeat(65),
];

describe('X1: machine ids in the URL', () => {
  it.each(BAD_SEGMENTS)('refuses GET, PUT, generate and check of %j with 400 STUDIO_BAD_PATH', async (segment) => {
    const get = await send('GET', `/api/machines/${segment}`);
    const put = await send('PUT', `/api/machines/${segment}`, { spec: tinySpec('x'), baseVersion: null });
    const generate = await send('POST', `/api/machines/${segment}/generate`);
    const check = await send('POST', `/api/machines/${segment}/check`, { spec: tinySpec('x') });
    for (const response of [get, put, generate, check]) {
      expect(response.status).toBe(400);
      expect(response.json?.code).toBe('STUDIO_BAD_PATH');
    }
  });

  it('refuses an absolute-form request target with 400 STUDIO_BAD_PATH', async () => {
    const response = await send('GET', `http://127.0.0.1:${studio.port}/api/machines/../../package.json`);
    expect(response.status).toBe(400);
    expect(response.json?.code).toBe('STUDIO_BAD_PATH');
  });

  it('refuses a spec whose id is a traversal even when the URL id is fine', async () => {
    const put = await send('PUT', '/api/machines/x', { spec: tinySpec('../x'), baseVersion: null });
    expect(put.status).toBe(400);
    expect(put.json.code).toBe('STUDIO_ID_MISMATCH');
    expect(existsSync(join(root, 'x'))).toBe(false);
  });
});

describe('X1: symlinks inside machines/ and tools/', () => {
  it.each(['evil', 'leak', 'sib'])(
    'refuses to read, write, generate or check machine %s, whose symlink leads out of machines/',
    async (id) => {
      const target = { evil: 'outside/evil/evil.flow.json', leak: 'outside/secret.flow.json', sib: 'machines-evil/sib/sib.flow.json' }[id]!;
      const version = sha256(await readFile(join(root, target)));
      const get = await send('GET', `/api/machines/${id}`);
      const put = await send('PUT', `/api/machines/${id}`, {
        spec: { ...tinySpec(id), description: 'written through a symlink' },
        baseVersion: version,
      });
      const create = await send('PUT', `/api/machines/${id}`, { spec: tinySpec(id), baseVersion: null });
      const generate = await send('POST', `/api/machines/${id}/generate`);
      const generateEdited = await send('POST', `/api/machines/${id}/generate`, { spec: tinySpec(id), baseVersion: version });
      const check = await send('POST', `/api/machines/${id}/check`, { spec: tinySpec(id) });
      for (const response of [get, put, create, generate, generateEdited, check]) {
        expect(response.status).toBe(400);
        expect(response.json.code).toBe('STUDIO_BAD_PATH');
      }
      expect(get.body).not.toContain('"specVersion"');
    },
  );

  it('leaves machines reached through symlinks out of the list', async () => {
    const list = await send('GET', '/api/machines');
    expect(list.status).toBe(200);
    expect(list.json.machines.map((m: { id: string }) => m.id)).toEqual([
      'incident-triage',
      'order-support',
      'support-billing',
      'support-desk',
      'support-orders',
    ]);
  });

  it('never writes a tool stub through a symlink, dangling or not (409 STUDIO_EXISTS)', async () => {
    const linked = await send('POST', '/api/tools', { name: 'linked' });
    expect(linked.status).toBe(409);
    expect(linked.json.code).toBe('STUDIO_EXISTS');
    expect(await readFile(join(root, 'outside', 'linked.ts'), 'utf8')).toBe('export const linked = 1;\n');

    await symlink(join(root, 'outside', 'ghost.ts'), join(root, 'tools', 'ghost.ts'));
    try {
      const ghost = await send('POST', '/api/tools', { name: 'ghost' });
      expect(ghost.status).toBe(409);
      expect(ghost.json.code).toBe('STUDIO_EXISTS');
      expect(existsSync(join(root, 'outside', 'ghost.ts'))).toBe(false);
    } finally {
      await rm(join(root, 'tools', 'ghost.ts'));
    }
  });
});

describe('X1: tool names in the body', () => {
  const BAD_NAMES = [
    '../x',
    '..\\x',
    '/abs',
    'C:\\x',
    '\\\\host\\x',
    'a/../../x',
    'x\u0000',
    'x#y',
    'x.',
    'x ',
    'X',
    'x.ts',
    '%2e%2e%2fx',
    'x/y',
    '',
  ];
  it.each(BAD_NAMES)('refuses tool name %j with 400 STUDIO_BAD_NAME', async (name) => {
    const response = await send('POST', '/api/tools', { name });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('STUDIO_BAD_NAME');
  });
});

describe('X1: after every refusal', () => {
  it('left every file outside machines/ and tools/ byte-identical', async () => {
    const after = await snapshotOutside(root);
    expect(after).toEqual(before);
  });

  it('left only allow-listed suffixes in machines/ and tools/, and no temporary files', async () => {
    const files: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const name of await readdir(dir)) {
        const path = join(dir, name);
        const stat = await lstat(path);
        if (stat.isSymbolicLink()) continue;
        if (stat.isDirectory()) await walk(path);
        else files.push(relative(root, path));
      }
    };
    await walk(join(root, 'machines'));
    await walk(join(root, 'tools'));
    for (const file of files) {
      expect(file).toMatch(
        /^(machines\/flow\.schema\.json|machines\/[a-z0-9-]+\/[a-z0-9-]+\.(flow\.json|machine\.ts|registry\.ts|impl\.ts)|machines\/[a-z0-9-]+\/cases\/[a-z0-9_-]+\.case\.jsonl|tools\/[a-z0-9_]+\.ts)$/,
      );
    }
  });
});
