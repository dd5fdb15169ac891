import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { cliArgs } from '../helpers/cli.ts';
import { editedMachine } from '../helpers/edited-machines.ts';
import { copyProject } from '../helpers/project.ts';

let project: Awaited<ReturnType<typeof copyProject>>;
let file: string;
const ids = { refund: '', asking: '' };

function flowing(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), { cwd: project.dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  project = await copyProject('flowing-migrate-cli-');
  file = join(project.dir, 'sessions.db');
  const store = createSqliteStore({ file });
  const runtime = createRuntime({ machines: [orderSupport], store, warmSessions: 0 });
  const refund = await runtime.createSession(orderSupport);
  await refund.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
  const asking = await runtime.createSession(orderSupport);
  await asking.send({ type: 'USER_MESSAGE', text: 'where is my order' });
  Object.assign(ids, { refund: refund.id, asking: asking.id });
  await store.close();
  // The team renames await_approval and drops ask_order_id, regenerates, and writes a hook for the rename.
  await editedMachine(project.dir, 'order-support', 'order-support', (spec) => {
    const states = spec.states.active.states;
    states.await_manager = states.await_approval;
    delete states.await_approval;
    delete states.ask_order_id;
    spec.states = JSON.parse(
      JSON.stringify(spec.states).replaceAll('"await_approval"', '"await_manager"').replaceAll('"ask_order_id"', '"order_not_found"'),
    );
  });
  await writeFile(
    join(project.dir, 'machines/order-support/order-support.impl.ts'),
    "import { defineMigration } from '@flowing/runtime';\n\nexport const migrate = defineMigration({ states: { 'active.await_approval': 'active.await_manager' } });\n",
  );
}, 90_000);

afterAll(async () => {
  await project?.remove();
});

describe('flowing sessions --stale and flowing migrate', () => {
  it('lists each stale session with where it waits, the reason, and whether the hook carries it over', async () => {
    const listed = await flowing('sessions', '--stale', '--store', `sqlite:${file}`);
    expect(listed.stderr).toBe('');
    expect(listed.status).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines.find((l) => l.startsWith(ids.refund))).toMatch(
      /in active\.await_approval .*STALE_STATE_REMOVED.*the migration hook carries it over/,
    );
    expect(lines.find((l) => l.startsWith(ids.asking))).toMatch(/in active\.ask_order_id .*STALE_STATE_REMOVED/);
    expect(lines.find((l) => l.startsWith(ids.asking))).not.toMatch(/hook carries/);
    expect(lines.at(-1)).toBe('2 stale session(s)');
  }, 60_000);

  it('migrates with the hook (a dry run first writes nothing), logs session.migrated, and leaves the other listed', async () => {
    const dry = await flowing('migrate', '--dry-run', '--store', `sqlite:${file}`);
    expect(dry.stdout).toMatch(new RegExp(`would migrate  ${ids.refund} .*\\(hook\\)  active\\.await_approval -> active\\.await_manager`));
    expect(dry.stdout).toMatch(/1 would migrate, 1 stale, 0 failed \(dry run: nothing written\)/);
    expect(dry.status).toBe(1);

    const done = await flowing('migrate', '--store', `sqlite:${file}`);
    expect(done.stdout).toMatch(/1 migrated, 1 stale, 0 failed/);
    expect(done.stdout).toMatch(new RegExp(`stale  ${ids.asking} .*STALE_STATE_REMOVED`));
    const store = createSqliteStore({ file });
    try {
      const events = await store.readEvents(ids.refund, 0);
      expect(events.filter((e) => e.type === 'session.migrated').map((e) => e.data)).toEqual([
        expect.objectContaining({ fromVersion: orderSupport.specHash, hook: true, state: { active: 'await_manager' } }),
      ]);
      expect((await store.load(ids.asking))?.specHash).toBe(orderSupport.specHash);
    } finally {
      await store.close();
    }
    const again = await flowing('sessions', '--stale', '--json', '--store', `sqlite:${file}`);
    expect(
      again.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).sessionId),
    ).toEqual([ids.asking]);
  }, 60_000);
});
