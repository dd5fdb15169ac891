/**
 * A message stored but never delivered: the sending process dies between the commit that logs `channel.sent` and the
 * in-process delivery (crash point `channel-sent-before-delivery`). The next runtime on the same store finds it in
 * the logs at start and applies it once; the one after finds nothing left to do.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '@flowing/runtime';
import { createSqliteStore } from '@flowing/runtime/sqlite';
import { BILLING, importChannelMachines, ORDERS, writeChannelMachines } from '../helpers/channel-machines.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';
import { within } from '../helpers/wait.ts';

const CHILD = join(REPO_DIR, 'test/helpers/channel-crash-child.ts');

let project: Awaited<ReturnType<typeof copyProject>>;
let machines: { orders: any; billing: any };
beforeAll(async () => {
  project = await copyProject('flowing-channels-crash-');
  await writeChannelMachines(project.dir, [ORDERS, BILLING]);
  machines = await importChannelMachines(project.dir);
}, 60_000);
afterAll(async () => {
  await project?.remove();
});

function runChild(store: string, fault?: string): Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), CHILD, store, project.dir],
    {
      cwd: REPO_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(fault ? { FLOWING_FAULT: fault } : {}) },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return within(
    new Promise((resolve) => child.once('exit', (_code, signal) => resolve({ stdout, stderr, signal }))),
    60_000,
    'the channel crash child',
  );
}

describe('a channel message a crash kept from its receiver (SQLite)', () => {
  it('is stored with the step, found at the next start, applied once, and not again at the start after', async () => {
    const file = join(project.dir, 'crash.db');
    const crashed = await runChild(`sqlite:${file}`, 'channel-sent-before-delivery:1');
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    expect(crashed.stdout).not.toContain('SENT');

    const store = createSqliteStore({ file });
    const sent = (await store.readEvents('sender')).filter((e) => e.type === 'channel.sent');
    expect(sent).toHaveLength(1);
    expect(await store.load('billing--A1')).toBeUndefined();

    const first = createRuntime({ machines: [machines.orders, machines.billing], store });
    expect(await first.channels!.recovered).toBe(1);
    const received = (await store.readEvents('billing--A1')).filter((e) => e.type === 'channel.received');
    expect(received.map((e) => e.data)).toEqual([
      expect.objectContaining({ messageId: (sent[0]!.data as any).messageId, from: 'sender', channel: 'billing.need_order' }),
    ]);
    expect((await first.session('billing--A1').snapshot()).context).toMatchObject({ questions: 1, lastQuestion: 'paid?' });

    const second = createRuntime({ machines: [machines.orders, machines.billing], store });
    expect(await second.channels!.recovered).toBe(0);
    expect((await store.readEvents('billing--A1')).filter((e) => e.type === 'channel.received')).toHaveLength(1);
    await store.close?.();
  }, 90_000);

  it('without the crash, the message is delivered in-process and nothing is left for the next start', async () => {
    const file = join(project.dir, 'no-crash.db');
    const ran = await runChild(`sqlite:${file}`);
    expect(ran.stdout, ran.stderr).toContain('DONE');
    const store = createSqliteStore({ file });
    const runtime = createRuntime({ machines: [machines.orders, machines.billing], store });
    expect(await runtime.channels!.recovered).toBe(0);
    expect((await store.readEvents('billing--A1')).filter((e) => e.type === 'channel.received')).toHaveLength(1);
    await store.close?.();
  }, 90_000);
});
