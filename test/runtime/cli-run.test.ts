import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../bin/run/run.ts';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, options: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe('flowing run', () => {
  it('runs order-support offline with --message and exits 0 while waiting for input', async () => {
    const io = capture();
    expect(await runCommand('order-support', { message: 'where is my order A1001', ...io.options })).toBe(0);
    expect(io.out.some((l) => /tool\.completed\s+trace_shipment/.test(l))).toBe(true);
    expect(io.out.some((l) => l.includes('message.complete') && l.includes('Order A1001 is shipped'))).toBe(true);
    expect(io.out.at(-1)).toMatch(/^session \S+ waiting$/);
  });

  it('prints JSON lines with --json, one event envelope per line, seq 1..n', async () => {
    const io = capture();
    expect(await runCommand('order-support', { message: 'hello', json: true, ...io.options })).toBe(0);
    const events = io.out.map((l) => JSON.parse(l) as { seq: number; type: string });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.type).toBe('session.started');
  });

  it('sends the events of a JSON-lines file in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowing-run-'));
    const file = join(dir, 'events.jsonl');
    await writeFile(file, '{"type":"USER_MESSAGE","text":"refund A1002"}\n\n{"type":"APPROVE"}\n');
    const io = capture();
    expect(await runCommand('order-support', { events: file, ...io.options })).toBe(0);
    expect(io.out.some((l) => /tool\.completed\s+issue_refund/.test(l))).toBe(true);
  });

  it('exits 2 for an unknown machine, an unreadable events file, and a bad JSON line (naming the line)', async () => {
    const unknown = capture();
    expect(await runCommand('no-such-machine', unknown.options)).toBe(2);
    expect(unknown.err[0]).toMatch(/UNKNOWN_MACHINE/);
    const unreadable = capture();
    expect(await runCommand('order-support', { events: join(tmpdir(), 'missing-flowing-events.jsonl'), ...unreadable.options })).toBe(2);
    expect(unreadable.err[0]).toMatch(/RUN_EVENTS_UNREADABLE/);
    const dir = await mkdtemp(join(tmpdir(), 'flowing-run-'));
    const file = join(dir, 'bad.jsonl');
    await writeFile(file, '{"type":"APPROVE"}\n{oops\n');
    const bad = capture();
    expect(await runCommand('order-support', { events: file, ...bad.options })).toBe(2);
    expect(bad.err[0]).toMatch(/RUN_EVENTS_BAD_LINE: .*bad\.jsonl:2:/);
  });

  it('exits 0 when the machine reaches a final state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowing-run-'));
    const file = join(dir, 'cancel.jsonl');
    await writeFile(file, '{"type":"CANCEL"}\n');
    const io = capture();
    expect(await runCommand('order-support', { events: file, ...io.options })).toBe(0);
    expect(io.out.at(-1)).toMatch(/done$/);
  });
});

describe('flowing run with OPENAI_BASE_URL', () => {
  it('talks to the OpenAI-compatible server named by OPENAI_BASE_URL through the OpenAI provider', async () => {
    const { reply, startFakeOpenAI, streamed } = await import('../helpers/fake-openai.ts');
    const fake = await startFakeOpenAI();
    const saved = { base: process.env.OPENAI_BASE_URL, model: process.env.FLOWING_MODEL };
    process.env.OPENAI_BASE_URL = fake.baseURL;
    process.env.FLOWING_MODEL = 'fake-model';
    try {
      fake.enqueue(
        reply('{"label": "order_query"}', { usage: { prompt: 30, completion: 5 } }),
        reply('{"orderId": "A1001"}', { usage: { prompt: 30, completion: 5 } }),
        streamed(['Your order ', 'is on its way.'], { usage: { prompt: 50, completion: 8 } }),
      );
      const io = capture();
      expect(await runCommand('order-support', { message: 'where is my order A1001', json: true, ...io.options })).toBe(0);
      const events = io.out.map((l) => JSON.parse(l) as { type: string; data: Record<string, any> });
      expect(events.filter((e) => e.type === 'llm.started').every((e) => e.data.isModel === true)).toBe(true);
      expect(
        events
          .filter((e) => e.type === 'message.delta')
          .map((e) => e.data.text)
          .join(''),
      ).toBe('Your order is on its way.');
      expect(fake.requests).toHaveLength(3);
      // FLOWING_MODEL overrides the spec's per-step model (gpt-4o-mini): the deployment picks the model.
      expect(fake.requests.map((r) => r.body.model)).toEqual(['fake-model', 'fake-model', 'fake-model']);
      expect(events.filter((e) => e.type === 'llm.started').map((e) => e.data.model)).toEqual(['fake-model', 'fake-model', 'fake-model']);
    } finally {
      if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.base;
      if (saved.model === undefined) delete process.env.FLOWING_MODEL;
      else process.env.FLOWING_MODEL = saved.model;
      await fake.close();
    }
  });
});
