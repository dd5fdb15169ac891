// Saving an edit that removes a state sessions wait in: the studio server asks the connected runtime and warns.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { createServer } from '@flowing/runtime/server';
import { startStudio, type StudioServer } from '@flowing/studio/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { copyProject } from '../helpers/project.ts';

let studio: StudioServer;
let project: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  project = await copyProject('flowing-save-stranding-');
  const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore() });
  for (let i = 0; i < 3; i++) {
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
  }
  await runtime.createSession(orderSupport);
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

async function save(edit: (spec: any) => void) {
  const file = join(project.dir, 'machines/order-support/order-support.flow.json');
  const loaded = await readFile(file, 'utf8');
  const spec = JSON.parse(loaded);
  edit(spec);
  const response = await fetch(`${studio.url}api/machines/order-support`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ spec, baseVersion: sha256(loaded) }),
  });
  return { status: response.status, body: (await response.json()) as { stranded: unknown; warning?: string } };
}

describe('saving a spec while sessions wait in the connected runtime', () => {
  it('saves an edit that removes no waited-in state without a warning', async () => {
    const saved = await save((spec) => {
      spec.states.active.states.small_talk.invoke.prompt = 'Reply in one line: {{ context.lastMessage }}';
    });
    expect(saved.status).toBe(200);
    expect(saved.body.stranded).toEqual([]);
    expect(saved.body.warning).toBeUndefined();
  });

  it('warns that 3 waiting sessions are in `await_approval`, which the edit removes, and saves', async () => {
    const saved = await save((spec) => {
      const states = spec.states.active.states;
      delete states.await_approval;
      spec.states = JSON.parse(JSON.stringify(spec.states).replaceAll('"await_approval"', '"compose_reply"'));
    });
    expect(saved.status).toBe(200);
    expect(saved.body.stranded).toEqual([{ state: 'active.await_approval', sessions: 3 }]);
    expect(saved.body.warning).toMatch(/^3 waiting sessions are in `await_approval`, which this edit removes/);
    expect(await readFile(join(project.dir, 'machines/order-support/order-support.flow.json'), 'utf8')).not.toContain('await_approval');
  });
});
