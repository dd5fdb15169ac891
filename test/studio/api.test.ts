import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSpec } from '../../spec/index.ts';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

let studio: StudioTestServer;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const specPath = (id: string) => join(studio.rootDir, 'machines', id, `${id}.flow.json`);

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${studio.url}api/${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function load(id: string) {
  const { status, json } = await api('GET', `machines/${id}`);
  expect(status).toBe(200);
  return json as { id: string; file: string; text: string; spec: any; version: string; problems: any[] };
}

beforeAll(async () => {
  studio = await startStudioServer();
});
afterAll(async () => {
  await studio?.close();
});

describe('GET /api/machines', () => {
  it('lists every machines/*/*.flow.json with its sha256 version and problems', async () => {
    const { status, json } = await api('GET', 'machines');
    expect(status).toBe(200);
    const ids = json.machines.map((m: { id: string }) => m.id);
    expect(ids).toEqual(['incident-triage', 'order-support', 'support-billing', 'support-desk', 'support-orders']);
    for (const machine of json.machines) {
      expect(machine.file).toBe(`machines/${machine.id}/${machine.id}.flow.json`);
      expect(machine.version).toBe(sha256(await readFile(specPath(machine.id))));
      expect(machine.problems.filter((p: { severity: string }) => p.severity === 'error')).toEqual([]);
    }
  });

  it('loads one machine with its text, parsed spec and version', async () => {
    const machine = await load('order-support');
    const bytes = await readFile(specPath('order-support'));
    expect(machine.text).toBe(bytes.toString('utf8'));
    expect(machine.spec).toEqual(JSON.parse(bytes.toString('utf8')));
    expect(machine.version).toBe(sha256(bytes));
  });

  it('answers 404 STUDIO_NOT_FOUND for a machine that does not exist', async () => {
    const { status, json } = await api('GET', 'machines/no-such-machine');
    expect(status).toBe(404);
    expect(json.code).toBe('STUDIO_NOT_FOUND');
  });

  it('answers an unknown route with 404 STUDIO_NOT_FOUND and a wrong method with 405', async () => {
    expect((await api('GET', 'nothing-here')).json.code).toBe('STUDIO_NOT_FOUND');
    const wrong = await api('PATCH', 'machines/order-support');
    expect(wrong.status).toBe(405);
    expect(wrong.json.code).toBe('STUDIO_METHOD_NOT_ALLOWED');
  });
});

describe('POST /api/machines/:id/generate', () => {
  // The first generation loads ts-morph and type-checks cold: slow on a busy machine.
  it('generates and writes the machine and registry, then reports them unchanged on a second run', { timeout: 120_000 }, async () => {
    const first = await api('POST', 'machines/order-support/generate');
    expect(first.status).toBe(200);
    expect(first.json.ok).toBe(true);
    const paths = first.json.files.map((f: { path: string }) => f.path).sort();
    expect(paths).toEqual(['machines/order-support/order-support.machine.ts', 'machines/order-support/order-support.registry.ts']);
    for (const file of first.json.files) {
      expect(await readFile(join(studio.rootDir, file.path), 'utf8')).toBe(file.text);
    }
    expect(first.json.timings.total).toBeGreaterThan(0);

    const second = await api('POST', 'machines/order-support/generate');
    expect(second.json.ok).toBe(true);
    for (const file of second.json.files) {
      expect(file.changed).toBe(false);
      expect(file.previous).toBe(file.text);
    }
  });

  it('maps a type error in a guard to the JSON pointer of that guard (CODEGEN_TYPE_ERROR)', { timeout: 120_000 }, async () => {
    const machine = await load('order-support');
    const spec = structuredClone(machine.spec);
    spec.states.active.states.fetch_order.invoke.onDone[1].guard = "output.stauts == 'shipped'";
    const saved = await api('PUT', 'machines/order-support', { spec, baseVersion: machine.version });
    expect(saved.status).toBe(200);
    const before = await readFile(join(studio.rootDir, 'machines/order-support/order-support.machine.ts'), 'utf8');

    const { status, json } = await api('POST', 'machines/order-support/generate');
    expect(status).toBe(200);
    expect(json.ok).toBe(false);
    const typeErrors = json.problems.filter((p: { code: string }) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(typeErrors.length).toBeGreaterThan(0);
    expect(typeErrors[0].path).toMatch(/^\/states\/active\/states\/fetch_order\/invoke\/onDone\/1/);
    // Code that does not type-check is never written.
    expect(await readFile(join(studio.rootDir, 'machines/order-support/order-support.machine.ts'), 'utf8')).toBe(before);

    const restored = await api('PUT', 'machines/order-support', { spec: machine.spec, baseVersion: saved.json.version });
    expect(restored.status).toBe(200);
  });

  it('refuses to run codegen on an invalid spec with 422 STUDIO_SPEC_INVALID and writes nothing', async () => {
    const spec = { specVersion: 1, id: 'half-done', initial: 'start', states: { start: { on: { GO: 'nowhere' } } } };
    const saved = await api('PUT', 'machines/half-done', { spec, baseVersion: null, draft: true });
    expect(saved.status).toBe(200);
    const { status, json } = await api('POST', 'machines/half-done/generate');
    expect(status).toBe(422);
    expect(json.code).toBe('STUDIO_SPEC_INVALID');
    expect(json.details.problems.some((p: { code: string }) => p.code === 'SPEC_UNKNOWN_TARGET')).toBe(true);
    expect(existsSync(join(studio.rootDir, 'machines/half-done/half-done.machine.ts'))).toBe(false);
    expect(existsSync(join(studio.rootDir, 'machines/half-done/half-done.registry.ts'))).toBe(false);
  });
});

describe('PUT /api/machines/:id', () => {
  it('writes exactly formatSpec(spec) and answers the new version', async () => {
    const machine = await load('incident-triage');
    const spec = { ...machine.spec, description: 'Edited in the studio.' };
    const { status, json } = await api('PUT', 'machines/incident-triage', { spec, baseVersion: machine.version });
    expect(status).toBe(200);
    const bytes = await readFile(specPath('incident-triage'));
    expect(bytes.toString('utf8')).toBe(formatSpec(spec));
    expect(json.version).toBe(sha256(bytes));
    expect(json.problems.filter((p: { severity: string }) => p.severity === 'error')).toEqual([]);
  });

  it('refuses with 409 STUDIO_CONFLICT when the file changed on disk after load, leaving the file untouched', async () => {
    const machine = await load('incident-triage');
    const edited = machine.text.replace('"specVersion": 1', '"specVersion":  1');
    await writeFile(specPath('incident-triage'), edited);
    const spec = { ...machine.spec, description: 'This save must not land.' };
    const { status, json } = await api('PUT', 'machines/incident-triage', { spec, baseVersion: machine.version });
    expect(status).toBe(409);
    expect(json.code).toBe('STUDIO_CONFLICT');
    expect(json.details.currentVersion).toBe(sha256(edited));
    expect(await readFile(specPath('incident-triage'), 'utf8')).toBe(edited);
  });

  it('refuses a spec with errors with 422 STUDIO_SPEC_INVALID and its problems, leaving the file untouched', async () => {
    const machine = await load('incident-triage');
    const spec = { ...machine.spec, initial: 'no_such_state' };
    const { status, json } = await api('PUT', 'machines/incident-triage', { spec, baseVersion: machine.version });
    expect(status).toBe(422);
    expect(json.code).toBe('STUDIO_SPEC_INVALID');
    expect(
      json.details.problems.some((p: { code: string; path: string }) => p.code === 'SPEC_UNKNOWN_INITIAL' && p.path === '/initial'),
    ).toBe(true);
    expect(await readFile(specPath('incident-triage'), 'utf8')).toBe(machine.text);
  });

  it('saves a spec with errors when the user marks it as a draft', async () => {
    const machine = await load('incident-triage');
    const spec = { ...machine.spec, initial: 'no_such_state' };
    const { status, json } = await api('PUT', 'machines/incident-triage', { spec, baseVersion: machine.version, draft: true });
    expect(status).toBe(200);
    expect(json.problems.some((p: { code: string }) => p.code === 'SPEC_UNKNOWN_INITIAL')).toBe(true);
    expect(await readFile(specPath('incident-triage'), 'utf8')).toBe(formatSpec(spec));
  });

  it('creates a machine with baseVersion null, and refuses to create it twice with 409', async () => {
    const spec = {
      specVersion: 1,
      id: 'greeter',
      events: { HELLO: {} },
      initial: 'idle',
      states: { idle: { on: { HELLO: 'done' } }, done: { type: 'final' } },
    };
    const created = await api('PUT', 'machines/greeter', { spec, baseVersion: null });
    expect(created.status).toBe(200);
    expect(await readFile(specPath('greeter'), 'utf8')).toBe(formatSpec(spec));
    const again = await api('PUT', 'machines/greeter', { spec, baseVersion: null });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('STUDIO_CONFLICT');
    expect(again.json.details.currentVersion).toBe(created.json.version);
    const listed = await api('GET', 'machines');
    expect(listed.json.machines.map((m: { id: string }) => m.id)).toContain('greeter');
  });

  it('refuses a spec whose id differs from the URL with 400 STUDIO_ID_MISMATCH', async () => {
    const machine = await load('order-support');
    const { status, json } = await api('PUT', 'machines/order-support', {
      spec: { ...machine.spec, id: 'other' },
      baseVersion: machine.version,
    });
    expect(status).toBe(400);
    expect(json.code).toBe('STUDIO_ID_MISMATCH');
  });

  it('refuses a body without spec or with a malformed baseVersion with 400 STUDIO_BAD_REQUEST', async () => {
    expect((await api('PUT', 'machines/order-support', { baseVersion: null })).json.code).toBe('STUDIO_BAD_REQUEST');
    const machine = await load('order-support');
    expect((await api('PUT', 'machines/order-support', { spec: machine.spec, baseVersion: 'abc' })).json.code).toBe('STUDIO_BAD_REQUEST');
  });

  it('refuses a body that is not JSON with 400 STUDIO_BAD_JSON', async () => {
    const response = await fetch(`${studio.url}api/machines/order-support`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: '{"spec": ',
    });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe('STUDIO_BAD_JSON');
  });
});

describe('tools', () => {
  it('lists the tools of tools/ with their contracts as JSON Schema', async () => {
    const { status, json } = await api('GET', 'tools');
    expect(status).toBe(200);
    const queryOrder = json.tools.find((t: { name: string }) => t.name === 'query_order');
    expect(queryOrder).toMatchObject({ idempotent: true, risk: 'low', errors: ['ORDER_NOT_FOUND'], file: 'tools/query_order.ts' });
    expect(Object.keys(queryOrder.inputSchema.properties)).toEqual(['order_id', 'customer_id']);
    expect(queryOrder.outputSchema.type).toBe('object');
    expect(json.tools.find((t: { name: string }) => t.name === 'issue_refund').risk).toBe('high');
  });

  it('creates a typed stub in tools/ (201), lists it, and never overwrites it (409 STUDIO_EXISTS)', async () => {
    const created = await api('POST', 'tools', { name: 'lookup_invoice' });
    expect(created.status).toBe(201);
    expect(created.json.path).toBe('tools/lookup_invoice.ts');
    const text = await readFile(join(studio.rootDir, 'tools/lookup_invoice.ts'), 'utf8');
    expect(text).toContain('defineTool');
    expect(text).toMatch(/name: ['"]lookup_invoice['"]/);

    const listed = await api('GET', 'tools');
    expect(listed.json.tools.map((t: { name: string }) => t.name)).toContain('lookup_invoice');

    await writeFile(join(studio.rootDir, 'tools/lookup_invoice.ts'), text + '// hand edit\n');
    const again = await api('POST', 'tools', { name: 'lookup_invoice' });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('STUDIO_EXISTS');
    expect(await readFile(join(studio.rootDir, 'tools/lookup_invoice.ts'), 'utf8')).toBe(text + '// hand edit\n');
  });

  it('refuses a tool name that is not a snake_case identifier with 400 STUDIO_BAD_NAME', async () => {
    for (const name of ['LookupInvoice', 'lookup-invoice', '1tool', '', 'a'.repeat(65), 42]) {
      const { status, json } = await api('POST', 'tools', { name });
      expect(status, String(name)).toBe(400);
      expect(json.code).toBe('STUDIO_BAD_NAME');
    }
  });
});
