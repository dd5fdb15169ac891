import { describe, expect, it } from 'vitest';
import { testCommand } from '../../bin/test/test-command.ts';
import { reply, startFakeOpenAI, streamed } from '../helpers/fake-openai.ts';

const usage = (prompt: number, completion: number) => ({ usage: { prompt, completion } });

describe('flowing test --live against the local fake OpenAI-compatible server', () => {
  it('runs each case with the model answering over HTTP, reports pass/fail, model calls, tokens and latency per case', async () => {
    const fake = await startFakeOpenAI();
    const saved = { base: process.env.OPENAI_BASE_URL, model: process.env.FLOWING_MODEL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = fake.baseURL;
    process.env.OPENAI_API_KEY = 'test-key';
    process.env.FLOWING_MODEL = 'fake-model';
    try {
      // Cases run in file name order: not-found, order-query, refund-approved, refund-rejected.
      fake.enqueue(
        // not-found: this model calls it small talk, so the case takes another path and fails.
        reply('{"label": "other"}', usage(40, 3)),
        streamed(['Happy to help with orders.'], usage(30, 6)),
        // order-query
        reply('{"label": "order_query"}', usage(40, 3)),
        reply('{"orderId": "A1001"}', usage(35, 4)),
        streamed(['Order A1001 ', 'is in Leipzig.'], usage(60, 9)),
        // refund-approved, refund-rejected
        reply('{"label": "refund"}', usage(40, 3)),
        reply('{"orderId": "A1002"}', usage(35, 4)),
        reply('{"label": "refund"}', usage(40, 3)),
        reply('{"orderId": "A1002"}', usage(35, 4)),
      );
      const out: string[] = [];
      const code = await testCommand(['order-support'], { live: true, json: true, out: (l) => out.push(l), err: (l) => out.push(l) });
      expect(code).toBe(1);
      const report = JSON.parse(out.join('\n')) as {
        machines: Array<{
          cases: Array<{ name: string; ok: boolean; live: { modelCalls: number; tokens: number; latencyMs: number; realTools: string[] } }>;
        }>;
      };
      const cases = Object.fromEntries(report.machines[0]!.cases.map((c) => [c.name, c]));
      expect(Object.fromEntries(Object.entries(cases).map(([name, c]) => [name, c.ok]))).toEqual({
        'not-found': false,
        'order-query': true,
        'refund-approved': true,
        'refund-rejected': true,
      });
      expect(Object.fromEntries(Object.entries(cases).map(([name, c]) => [name, c.live.modelCalls]))).toEqual({
        'not-found': 2,
        'order-query': 3,
        'refund-approved': 2,
        'refund-rejected': 2,
      });
      expect(cases['order-query']!.live.tokens).toBe(40 + 3 + 35 + 4 + 60 + 9);
      expect(cases['order-query']!.live.latencyMs).toBeGreaterThan(0);
      expect(cases['order-query']!.live.realTools.sort()).toEqual(['query_order', 'resolve_user', 'trace_shipment']);
      expect(fake.requests).toHaveLength(9);
      expect(fake.requests.every((r) => r.body.model === 'fake-model')).toBe(true);
    } finally {
      for (const [name, value] of [
        ['OPENAI_BASE_URL', saved.base],
        ['FLOWING_MODEL', saved.model],
        ['OPENAI_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await fake.close();
    }
  }, 60_000);

  it('refuses --live without OPENAI_BASE_URL with LIVE_NOT_CONFIGURED (exit 2)', async () => {
    const saved = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
    try {
      const err: string[] = [];
      expect(await testCommand(['order-support'], { live: true, out: () => {}, err: (l) => err.push(l) })).toBe(2);
      expect(err.join('\n')).toContain('error LIVE_NOT_CONFIGURED');
    } finally {
      if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
    }
  });
});
