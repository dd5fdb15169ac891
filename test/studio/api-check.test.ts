import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSpec } from '../../spec/index.ts';
import { cliArgs } from '../helpers/cli.ts';
import { treeHashes } from '../helpers/project.ts';
import { startStudioServer, type StudioTestServer } from '../helpers/studio-server.ts';

const run = promisify(execFile);
let studio: StudioTestServer;
const SPEC = 'machines/order-support/order-support.flow.json';
const GUARD = '/states/active/states/await_approval/on/REJECT/guard';

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${studio.url}api/${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function loadOrderSupport(): Promise<{ spec: any; version: string }> {
  const { json } = await api('GET', 'machines/order-support');
  return { spec: json.spec, version: json.version };
}

/** The files under machines/ (hash by relative path): what a refused Generate must leave as it was. */
const machinesTree = () => treeHashes(join(studio.rootDir, 'machines'));

beforeAll(async () => {
  studio = await startStudioServer();
});
afterAll(async () => {
  await studio?.close();
});

describe('POST /api/machines/:id/check (type errors of an unsaved spec)', () => {
  // The first check loads ts-morph and type-checks cold: slow on a busy machine.
  it('answers the type error of a guard at its spec pointer, as codegen does, and writes nothing', { timeout: 300_000 }, async () => {
    const { spec } = await loadOrderSupport();
    spec.states.active.states.await_approval.on.REJECT.guard = "event.orderd == 'x'";
    const before = await machinesTree();
    const { status, json } = await api('POST', 'machines/order-support/check', { spec });
    expect(status).toBe(200);
    expect(json.typeChecked).toBe(true);
    expect(json.problems.map((p: any) => [p.code, p.severity, p.path])).toEqual([['CODEGEN_TYPE_ERROR', 'error', GUARD]]);
    expect(json.problems[0].message).toMatch(/^TS2339 Property 'orderd' does not exist/);
    expect(await machinesTree()).toEqual(before);

    // The same spec saved and run through `flowing codegen` gives the same file#pointer, code and message.
    const original = await readFile(join(studio.rootDir, SPEC), 'utf8');
    await writeFile(join(studio.rootDir, SPEC), formatSpec(spec));
    const cli = await run(process.execPath, cliArgs('codegen', '--json', SPEC), { cwd: studio.rootDir }).catch((e) => e);
    await writeFile(join(studio.rootDir, SPEC), original);
    const fromCli = JSON.parse(cli.stdout).problems.filter((p: any) => p.code === 'CODEGEN_TYPE_ERROR');
    expect(fromCli.map((p: any) => [p.file, p.path, p.message])).toEqual([[SPEC, GUARD, json.problems[0].message]]);
  });

  it('answers no problems for a spec whose code type-checks (and logs the warm check times)', { timeout: 300_000 }, async () => {
    const { spec } = await loadOrderSupport();
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      spec.states.active.states.fetch_order.invoke.onDone[1].guard = `output.status == 'shipped' && ${i} == ${i}`;
      const started = performance.now();
      const { json } = await api('POST', 'machines/order-support/check', { spec });
      times.push(performance.now() - started);
      expect(json).toMatchObject({ typeChecked: true, superseded: false, problems: [] });
    }
    console.log(`[check] warm check of order-support: ${times.map((t) => Math.round(t)).join(', ')} ms`);
  });

  // Answered at once, but after a check of an earlier test still running on the server's thread.
  it('does not type-check a spec with validation errors (the editor shows those itself)', { timeout: 300_000 }, async () => {
    const { spec } = await loadOrderSupport();
    spec.initial = 'nowhere';
    const { status, json } = await api('POST', 'machines/order-support/check', { spec });
    expect(status).toBe(200);
    expect(json).toMatchObject({ typeChecked: false, problems: [] });
  });

  it('collapses checks of one machine queued behind a running one into the newest', { timeout: 300_000 }, async () => {
    const { spec } = await loadOrderSupport();
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((field) => {
        const edited = structuredClone(spec);
        edited.states.active.states.await_approval.on.REJECT.guard = `event.${field} == 'x'`;
        return api('POST', 'machines/order-support/check', { spec: edited }).then((r) => r.json);
      }),
    );
    expect(answers.at(-1)).toMatchObject({ typeChecked: true, superseded: false });
    expect(answers.at(-1).problems[0].message).toMatch(/Property 'd' does not exist/);
    expect(answers.some((a) => a.superseded)).toBe(true);
  });

  it('refuses a body without a spec (400 STUDIO_BAD_REQUEST) and a spec of another machine (400 STUDIO_ID_MISMATCH)', async () => {
    expect((await api('POST', 'machines/order-support/check', { nope: 1 })).json.code).toBe('STUDIO_BAD_REQUEST');
    const { spec } = await loadOrderSupport();
    const other = await api('POST', 'machines/incident-triage/check', { spec });
    expect([other.status, other.json.code]).toEqual([400, 'STUDIO_ID_MISMATCH']);
  });
});

describe('POST /api/machines/:id/generate with the edited spec', () => {
  it('refuses to save a spec whose code has type errors: spec and code stay as they were, codegen --check passes', {
    timeout: 300_000,
  }, async () => {
    const { spec, version } = await loadOrderSupport();
    spec.states.active.states.await_approval.on.REJECT.guard = "event.orderd == 'x'";
    const before = await machinesTree();
    const { status, json } = await api('POST', 'machines/order-support/generate', { spec, baseVersion: version });
    expect(status).toBe(200);
    expect(json.ok).toBe(false);
    expect(json.version).toBeUndefined();
    expect(json.problems.filter((p: any) => p.code === 'CODEGEN_TYPE_ERROR').map((p: any) => p.path)).toEqual([GUARD]);
    expect(await machinesTree()).toEqual(before);
    const check = await run(process.execPath, cliArgs('codegen', '--check'), { cwd: studio.rootDir });
    expect(check.stdout).toMatch(/generated code is up to date/);
  });

  it('saves the spec together with its code when it type-checks, so codegen --check passes', { timeout: 300_000 }, async () => {
    const { spec, version } = await loadOrderSupport();
    spec.states.active.states.fetch_order.invoke.onDone[1].guard = "output.status == 'shipped' && context.userId != ''";
    const { status, json } = await api('POST', 'machines/order-support/generate', { spec, baseVersion: version });
    expect(status).toBe(200);
    expect(json.ok).toBe(true);
    const text = await readFile(join(studio.rootDir, SPEC), 'utf8');
    expect(text).toBe(formatSpec(spec));
    expect(json.version).toBe(createHash('sha256').update(text).digest('hex'));
    const machine = await readFile(join(studio.rootDir, 'machines/order-support/order-support.machine.ts'), 'utf8');
    expect(machine).toContain('context.userId !== ""');
    const check = await run(process.execPath, cliArgs('codegen', '--check'), { cwd: studio.rootDir });
    expect(check.stdout).toMatch(/generated code is up to date/);
  });

  it('refuses with 409 STUDIO_CONFLICT, writing nothing, when the spec changed on disk since it was loaded', async () => {
    const { spec } = await loadOrderSupport();
    const before = await machinesTree();
    const { status, json } = await api('POST', 'machines/order-support/generate', { spec, baseVersion: '0'.repeat(64) });
    expect([status, json.code]).toEqual([409, 'STUDIO_CONFLICT']);
    expect(await machinesTree()).toEqual(before);
  });
});
