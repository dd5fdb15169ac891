import { describe, expect, it } from 'vitest';
import type { MemorySpec } from '@flowing/spec';
import { runConversationBench } from '../../bin/bench/conversation-tokens.ts';
import { SUPPORT_MEMORY } from '../../bin/bench/conversation-script.ts';

const short: MemorySpec = { ...SUPPORT_MEMORY, window: 2, summarize: { ...SUPPORT_MEMORY.summarize!, after: 5 } };

describe('conversation token bench (short run)', () => {
  it('sends fewer tokens with memory and keeps the order id, the request and every answer in the last prompt', async () => {
    const lines: string[] = [];
    const result = await runConversationBench({ turns: 20, memory: short, every: 5, out: (line) => lines.push(line) });
    expect(result.missing).toEqual([]);
    expect(result.summaries).toBeGreaterThanOrEqual(2);
    expect(result.totals.compressed).toBeLessThan(result.totals.full);
    expect(result.perTurn).toHaveLength(20);
    expect(lines.filter((line) => /^ {2}\s*\d+\s+\d+\s+\d+\s+\d+\s+-?\d+%$/.test(line))).toHaveLength(4);
    expect(lines).toContain('kept facts: all in the last prompt');
  });

  it('reports the facts a memory did not keep', async () => {
    const { answersGiven: _, ...withoutAnswers } = SUPPORT_MEMORY.summarize!.keep as Record<string, never>;
    const forgetful: MemorySpec = { ...short, summarize: { ...short.summarize!, after: 5, keep: withoutAnswers } };
    const result = await runConversationBench({ turns: 20, memory: forgetful, out: () => {} });
    expect(result.missing.length).toBeGreaterThan(0);
    expect(result.missing[0]).toMatch(/^answer "/);
  });
});
