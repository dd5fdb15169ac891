// Saving a recorded case from the studio: PUT /api/machines/:id/cases/:name and GET /api/machines/:id/cases (issue 11).
import { existsSync, readFileSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCase } from '@flowing/runtime/testing';
import { treeHashes } from '../helpers/project.ts';
import { REPO_DIR, sendRaw, startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

let studio: StudioTestServer;
let orderCase: string;
let incidentCase: string;
/** The header line of a recorded order-support case (read now: the table of refusals below is built before the tests run). */
const ORDER_HEADER = readFileSync(join(REPO_DIR, 'machines/order-support/cases/order-query.case.jsonl'), 'utf8').split('\n')[0]!;

const send = (method: string, path: string, body?: unknown) => sendRaw(studio.port, method, path, {}, body);
const casePath = (id: string, name: string) => join(studio.rootDir, 'machines', id, 'cases', `${name}.case.jsonl`);

/** A recorded case's text with its header renamed (and, for `machineId`, moved to another machine). */
function withHeader(text: string, change: Record<string, unknown>): string {
  const [header, ...rest] = text.split('\n');
  return [JSON.stringify({ ...JSON.parse(header!), ...change }), ...rest].join('\n');
}

const snapshot = () => treeHashes(studio.rootDir);

beforeAll(async () => {
  studio = await startStudioServer();
  orderCase = await readFile(join(studio.rootDir, 'machines/order-support/cases/order-query.case.jsonl'), 'utf8');
  incidentCase = await readFile(join(studio.rootDir, 'machines/incident-triage/cases/critical.case.jsonl'), 'utf8');
});
afterAll(async () => {
  await studio?.close();
});

describe('PUT /api/machines/:id/cases/:name', () => {
  it('writes machines/<id>/cases/<name>.case.jsonl byte for byte and answers its project path', async () => {
    const text = withHeader(orderCase, { name: 'saved-query', source: 'inspector' });
    const saved = await send('PUT', '/api/machines/order-support/cases/saved-query', { text });
    expect(saved.status).toBe(200);
    expect(saved.json).toEqual({ file: 'machines/order-support/cases/saved-query.case.jsonl', replaced: false });
    expect(await readFile(casePath('order-support', 'saved-query'), 'utf8')).toBe(text);
    expect(parseCase(text).header.machineId).toBe('order-support');
    // Atomic: only the case itself is left in the folder, no temporary file beside it.
    expect((await readdir(join(studio.rootDir, 'machines/order-support/cases'))).filter((name) => !name.endsWith('.case.jsonl'))).toEqual(
      [],
    );
  });

  it('creates the cases/ folder of a machine that has none', async () => {
    const created = await send('POST', '/api/machines', { id: 'fresh-desk' });
    expect(created.status).toBe(201);
    const text = withHeader(orderCase, { machineId: 'fresh-desk', name: 'first' });
    const saved = await send('PUT', '/api/machines/fresh-desk/cases/first', { text });
    expect(saved.status).toBe(200);
    expect(saved.json).toEqual({ file: 'machines/fresh-desk/cases/first.case.jsonl', replaced: false });
    expect(await readFile(casePath('fresh-desk', 'first'), 'utf8')).toBe(text);
  });

  it('lists the case names of a machine, sorted, for the studio to warn before overwriting', async () => {
    const listed = await send('GET', '/api/machines/order-support/cases');
    expect(listed.status).toBe(200);
    expect(listed.json.cases).toEqual(
      expect.arrayContaining(['not-found', 'order-query', 'refund-approved', 'refund-rejected', 'saved-query']),
    );
    expect(listed.json.cases).toEqual([...listed.json.cases].sort());
    const none = await send('POST', '/api/machines', { id: 'no-cases' });
    expect(none.status).toBe(201);
    expect((await send('GET', '/api/machines/no-cases/cases')).json).toEqual({ cases: [] });
    const missing = await send('GET', '/api/machines/no-such-machine/cases');
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('STUDIO_NOT_FOUND');
  });

  it('refuses an existing name without replace with 409 STUDIO_CASE_EXISTS and leaves the file byte for byte', async () => {
    const before = await readFile(casePath('order-support', 'refund-approved'));
    const again = await send('PUT', '/api/machines/order-support/cases/refund-approved', {
      text: withHeader(orderCase, { name: 'refund-approved' }),
    });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({
      code: 'STUDIO_CASE_EXISTS',
      details: { file: 'machines/order-support/cases/refund-approved.case.jsonl' },
    });
    const explicit = await send('PUT', '/api/machines/order-support/cases/refund-approved', { text: orderCase, replace: false });
    expect(explicit.status).toBe(409);
    expect((await readFile(casePath('order-support', 'refund-approved'))).equals(before)).toBe(true);
  });

  it('rewrites an existing case with replace: true as a new file renamed into place, and says it replaced one', async () => {
    const path = casePath('order-support', 'to-replace');
    const old = withHeader(orderCase, { name: 'to-replace' });
    await writeFile(path, old);
    // A second name for the old file's bytes: a write in place would change them too, a rename leaves them as they were.
    const oldLink = join(studio.rootDir, 'old-case-link');
    await link(path, oldLink);
    const text = withHeader(orderCase, { name: 'to-replace', source: 'inspector' });
    const replaced = await send('PUT', '/api/machines/order-support/cases/to-replace', { text, replace: true });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toEqual({ file: 'machines/order-support/cases/to-replace.case.jsonl', replaced: true });
    expect(await readFile(path, 'utf8')).toBe(text);
    expect(await readFile(oldLink, 'utf8')).toBe(old);
    await rm(oldLink);
  });
});

describe('PUT /api/machines/:id/cases/:name refusals write nothing', () => {
  let before: Map<string, string>;
  beforeAll(async () => {
    before = await snapshot();
  });

  // `..%2F` and 65 characters never reach the route (the raw path guard refuses them), `a/b` is no route at all.
  it.each([
    ['..%2Fx', 400, 'STUDIO_BAD_PATH'],
    ['..%2F..%2Fpackage', 400, 'STUDIO_BAD_PATH'],
    ['..', 400, 'STUDIO_BAD_PATH'],
    ['a/b', 404, 'STUDIO_NOT_FOUND'],
    ['a.case', 400, 'STUDIO_BAD_PATH'],
    ['Refund', 400, 'STUDIO_BAD_NAME'],
    ['REFUND-APPROVED', 400, 'STUDIO_BAD_NAME'],
    ['-leading-dash', 400, 'STUDIO_BAD_NAME'],
    ['_leading-underscore', 400, 'STUDIO_BAD_NAME'],
    ['x'.repeat(65), 400, 'STUDIO_BAD_PATH'],
  ])('refuses the case name %j with %i %s', async (name, status, code) => {
    const response = await send('PUT', `/api/machines/order-support/cases/${name}`, { text: orderCase, replace: true });
    expect(response.status).toBe(status);
    expect(response.json.code).toBe(code);
  });

  it("accepts a name of exactly 64 characters (the runtime's limit) and refuses the same text under a bad machine id", async () => {
    const name = `a${'b'.repeat(63)}`;
    const saved = await send('PUT', `/api/machines/order-support/cases/${name}`, { text: orderCase });
    expect(saved.status).toBe(200);
    await rm(casePath('order-support', name));
    for (const id of ['Order-Support', 'order_support', '..%2Forder-support']) {
      const response = await send('PUT', `/api/machines/${id}/cases/ok`, { text: orderCase });
      expect(response.status).toBe(400);
      expect(response.json.code).toBe('STUDIO_BAD_PATH');
    }
  });

  it('refuses a machine that does not exist with 404 STUDIO_NOT_FOUND', async () => {
    const response = await send('PUT', '/api/machines/ghost-machine/cases/x', {
      text: withHeader(orderCase, { machineId: 'ghost-machine' }),
    });
    expect(response.status).toBe(404);
    expect(response.json.code).toBe('STUDIO_NOT_FOUND');
    expect(existsSync(join(studio.rootDir, 'machines', 'ghost-machine'))).toBe(false);
  });

  it("refuses a case recorded on another machine with 400 STUDIO_CASE_INVALID naming CASE_WRONG_MACHINE, the runtime parser's code", async () => {
    const response = await send('PUT', '/api/machines/order-support/cases/borrowed', { text: incidentCase });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'STUDIO_CASE_INVALID', details: { problem: 'CASE_WRONG_MACHINE' } });
    expect(response.json.message).toContain("'incident-triage'");
  });

  it.each([
    ['plain text', 'hello, this is not a case', 'CASE_BAD_LINE'],
    ['a session export', '{"kind":"flowing.session","formatVersion":1}\n', 'CASE_NO_HEADER'],
    ['a header alone', `${ORDER_HEADER}\n`, 'CASE_NO_EXPECTATION'],
    [
      'another format version',
      withHeader('{"type":"case"}\n{"type":"expect"}', { formatVersion: 2, machineId: 'order-support', specHash: 'x', name: 'v2' }),
      'CASE_FORMAT_VERSION',
    ],
    ['an unknown record', `${ORDER_HEADER}\n{"type":"surprise"}\n`, 'CASE_BAD_LINE'],
  ])("refuses %s with 400 STUDIO_CASE_INVALID naming the parser's code", async (_what, text, code) => {
    const response = await send('PUT', '/api/machines/order-support/cases/not-a-case', { text, replace: true });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'STUDIO_CASE_INVALID', details: { problem: code } });
  });

  it.each([
    ['no body', undefined],
    ['no text', { replace: true }],
    ['an empty text', { text: '   ' }],
    ['a text that is not a string', { text: { type: 'case' } }],
    ['replace that is not a boolean', { text: 'x', replace: 'yes' }],
    ['an array', [orderCase]],
  ])('refuses %s with 400 STUDIO_BAD_REQUEST or STUDIO_BAD_JSON', async (_what, body) => {
    const response = await send('PUT', '/api/machines/order-support/cases/bad-body', body);
    expect(response.status).toBe(400);
    expect(['STUDIO_BAD_REQUEST', 'STUDIO_BAD_JSON']).toContain(response.json.code);
  });

  it('left every file of the project as it was', async () => {
    expect(await snapshot()).toEqual(before);
  });
});

describe('PUT /api/machines/:id/cases/:name never writes through a symlink', () => {
  it('refuses a cases/ folder that is a symlink leading out of machines/ (400 STUDIO_BAD_PATH), to save and to list', async () => {
    expect((await send('POST', '/api/machines', { id: 'linked-cases' })).status).toBe(201);
    const outside = join(studio.rootDir, 'outside-cases');
    await mkdir(outside);
    await symlink(outside, join(studio.rootDir, 'machines', 'linked-cases', 'cases'));
    const before = await snapshot();
    for (const replace of [false, true]) {
      const response = await send('PUT', '/api/machines/linked-cases/cases/leak', {
        text: withHeader(orderCase, { machineId: 'linked-cases' }),
        replace,
      });
      expect(response.status).toBe(400);
      expect(response.json.code).toBe('STUDIO_BAD_PATH');
    }
    const listed = await send('GET', '/api/machines/linked-cases/cases');
    expect(listed.status).toBe(400);
    expect(listed.json.code).toBe('STUDIO_BAD_PATH');
    expect(await readdir(outside)).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a case file that is a symlink, leading out or dangling, even with replace, and leaves its target alone', async () => {
    const target = join(studio.rootDir, 'outside-secret.txt');
    await writeFile(target, 'secret\n');
    await symlink(target, casePath('order-support', 'linked'));
    await symlink(join(studio.rootDir, 'nowhere.txt'), casePath('order-support', 'dangling'));
    const before = await snapshot();
    for (const name of ['linked', 'dangling']) {
      for (const replace of [false, true]) {
        const response = await send('PUT', `/api/machines/order-support/cases/${name}`, { text: withHeader(orderCase, { name }), replace });
        expect(response.status).toBe(400);
        expect(response.json.code).toBe('STUDIO_BAD_PATH');
      }
    }
    expect(await readFile(target, 'utf8')).toBe('secret\n');
    expect(existsSync(join(studio.rootDir, 'nowhere.txt'))).toBe(false);
    expect(await snapshot()).toEqual(before);
    // A symlinked case is not offered in the list either.
    expect((await send('GET', '/api/machines/order-support/cases')).json.cases).not.toContain('linked');
  });
});

describe('a studio started without a case checker', () => {
  it('refuses to save a case with STUDIO_CASES_UNAVAILABLE and writes nothing', async () => {
    const { startStudio } = await import('@flowing/studio/server');
    const { inject } = await import('vitest');
    const bare = await startStudio({ rootDir: studio.rootDir, appDir: inject('studioAppDir'), port: 0, host: '127.0.0.1' });
    try {
      const before = await snapshot();
      const refused = await sendRaw(bare.port, 'PUT', '/api/machines/order-support/cases/unchecked', {}, { text: orderCase });
      expect([refused.status, refused.json.code]).toEqual([503, 'STUDIO_CASES_UNAVAILABLE']);
      expect(await snapshot()).toEqual(before);
    } finally {
      await bare.close();
    }
  });
});
