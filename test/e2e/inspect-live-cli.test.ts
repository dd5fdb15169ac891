// `flowing studio` as a user starts it: the runtime it mounts under /api/runtime over the project's generated machines
// and `.flowing/sessions.db`, behind the studio's own Host/Origin guard.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, REPO_DIR } from '../helpers/project.ts';
import { sendRaw } from '../helpers/studio-server.ts';

interface RunningStudio {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts `flowing studio --port 0` in `dir` from the sources and waits for the URL it prints. */
async function startCliStudio(dir: string): Promise<RunningStudio> {
  const child = spawn(process.execPath, cliArgs('studio', '--port', '0'), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`flowing studio printed no URL: ${output}`)), 30_000);
    const check = () => {
      const match = /Flowing studio: (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`flowing studio exited with ${code}: ${output}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Removes the generated code of every machine of the project but `keep` (their specs stay). */
async function removeGeneratedBut(dir: string, keep: readonly string[]): Promise<void> {
  for (const entry of await readdir(join(dir, 'machines'), { withFileTypes: true })) {
    const id = entry.name;
    if (entry.isDirectory() && !keep.includes(id)) await rm(join(dir, `machines/${id}/${id}.machine.ts`), { force: true });
  }
}

let project: Awaited<ReturnType<typeof copyProject>>;
beforeAll(async () => {
  project = await copyProject('flowing-inspect-cli-');
});
afterAll(async () => {
  await project?.remove();
});

describe('flowing studio: the runtime of the Inspect mode', () => {
  it('serves the generated machines under /api/runtime and keeps sessions in .flowing/sessions.db across restarts', async () => {
    // Machines without generated code: the runtime serves the one that has it and the Inspect mode says "generate first".
    await removeGeneratedBut(project.dir, ['order-support']);
    let studio = await startCliStudio(project.dir);
    try {
      const origin = studio.url.replace(/\/$/, '');
      const machines = (await (await fetch(`${origin}/api/runtime/machines`)).json()) as {
        machines: Array<{ id: string; spec: { id: string } | null }>;
      };
      expect(machines.machines.map((m) => [m.id, m.spec?.id])).toEqual([['order-support', 'order-support']]);

      // The studio page's own requests carry its Origin; the mounted runtime accepts them.
      const created = await fetch(`${origin}/api/runtime/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ machine: 'order-support' }),
      });
      expect(created.status).toBe(201);
      const { sessionId } = (await created.json()) as { sessionId: string };
      const sent = await fetch(`${origin}/api/runtime/sessions/${sessionId}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ type: 'USER_MESSAGE', text: 'where is my order A1001' }),
      });
      expect(sent.status).toBe(200);
      expect(await sent.json()).toMatchObject({ applied: true, status: 'waiting' });
      expect(existsSync(join(project.dir, '.flowing/sessions.db'))).toBe(true);
      // XState's inspection records of the run, kept by this studio process for the Inspect mode's event details.
      const trace = (await (await fetch(`${origin}/api/runtime/sessions/${sessionId}/xstate`)).json()) as {
        records: Array<{ type: string; actor: { root: boolean } }>;
      };
      expect(trace.records.some((r) => r.type === '@xstate.microstep' && r.actor.root)).toBe(true);
      expect(trace.records.some((r) => r.type === '@xstate.actor' && !r.actor.root)).toBe(true);

      // The studio's guard stands in front of the runtime: another site or a rebinding Host gets the studio's refusal.
      const foreign = await sendRaw(
        studio.port,
        'POST',
        '/api/runtime/sessions',
        { Origin: 'http://evil.example' },
        { machine: 'order-support' },
      );
      expect([foreign.status, foreign.json.code]).toEqual([403, 'STUDIO_FORBIDDEN_ORIGIN']);
      const rebinding = await sendRaw(studio.port, 'GET', '/api/runtime/sessions', { Host: `evil.example:${studio.port}` });
      expect([rebinding.status, rebinding.json.code]).toEqual([403, 'STUDIO_FORBIDDEN_HOST']);
      const traversal = await sendRaw(studio.port, 'GET', '/api/runtime/sessions/..%2f..%2fetc/events');
      expect([traversal.status, traversal.json.code]).toEqual([400, 'STUDIO_BAD_PATH']);

      await studio.stop();
      studio = await startCliStudio(project.dir);
      const listed = (await (await fetch(`${studio.url}api/runtime/sessions?machine=order-support`)).json()) as {
        sessions: Array<{ sessionId: string; status: string; seq: number }>;
      };
      expect(listed.sessions.map((s) => s.sessionId)).toEqual([sessionId]);
      const events = (await (await fetch(`${studio.url}api/runtime/sessions/${sessionId}/events`)).json()) as {
        events: Array<{ type: string }>;
      };
      expect(events.events.filter((e) => e.type === 'tool.completed')).toHaveLength(3);
      // The records are this process's memory of what it ran, not stored with the session.
      expect(await (await fetch(`${studio.url}api/runtime/sessions/${sessionId}/xstate`)).json()).toEqual({ records: [], dropped: 0 });
    } finally {
      await studio.stop();
    }
  }, 120_000);

  it('answers STUDIO_RUNTIME_UNAVAILABLE with the reason when no machine is generated, and serves one once it is', async () => {
    const empty = await copyProject('flowing-inspect-cli-empty-');
    try {
      await removeGeneratedBut(empty.dir, []);
      const studio = await startCliStudio(empty.dir);
      try {
        const refused = await fetch(`${studio.url}api/runtime/machines`);
        expect(refused.status).toBe(503);
        const body = (await refused.json()) as { code: string; message: string };
        expect(body.code).toBe('STUDIO_RUNTIME_UNAVAILABLE');
        expect(body.message).toContain('no generated machine found');
        // The editor itself is unaffected.
        expect((await fetch(`${studio.url}api/machines`)).status).toBe(200);
        // A failed start is not kept: once the code is generated, the next request starts the runtime.
        await copyFile(
          join(REPO_DIR, 'machines/order-support/order-support.machine.ts'),
          join(empty.dir, 'machines/order-support/order-support.machine.ts'),
        );
        const served = await fetch(`${studio.url}api/runtime/machines`);
        expect(served.status).toBe(200);
        expect(((await served.json()) as { machines: Array<{ id: string }> }).machines.map((m) => m.id)).toEqual(['order-support']);
      } finally {
        await studio.stop();
      }
    } finally {
      await empty.remove();
    }
  }, 120_000);
});
