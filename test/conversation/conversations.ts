import fc from 'fast-check';
import type { ConversationMessage } from '@flowing/spec';

type Step = { kind: 'user' } | { kind: 'text' } | { kind: 'calls'; count: number; delays: number[] };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ kind: 'user' as const }),
  fc.constant({ kind: 'text' as const }),
  fc
    .integer({ min: 1, max: 3 })
    .chain((count) =>
      fc
        .array(fc.integer({ min: 0, max: 3 }), { minLength: count, maxLength: count })
        .map((delays) => ({ kind: 'calls' as const, count, delays })),
    ),
);

/**
 * Random conversations: user messages, assistant answers and assistant tool calls whose results come after them,
 * right away or a few messages later (after a user message too, as a slow tool's result would).
 */
export const conversation: fc.Arbitrary<ConversationMessage[]> = fc.array(step, { maxLength: 40 }).map((steps) => {
  const out: ConversationMessage[] = [];
  let pending: Array<{ id: string; name: string; wait: number }> = [];
  let n = 0;
  const flush = (all: boolean) => {
    const due = pending.filter((p) => all || p.wait <= 0);
    pending = pending.filter((p) => !due.includes(p)).map((p) => ({ ...p, wait: p.wait - 1 }));
    for (const p of due) out.push({ role: 'tool', toolCallId: p.id, name: p.name, content: `{"ok":"${p.id}"}`, ok: true });
  };
  for (const s of steps) {
    if (s.kind === 'user') out.push({ role: 'user', content: `question ${++n}` });
    else if (s.kind === 'text') out.push({ role: 'assistant', content: `answer ${++n}` });
    else {
      const calls = s.delays.map((wait) => ({ id: `call_${++n}`, name: 'lookup', wait }));
      out.push({ role: 'assistant', content: '', toolCalls: calls.map((c) => ({ id: c.id, name: c.name, args: { q: c.id } })) });
      pending.push(...calls);
    }
    flush(false);
  }
  flush(true);
  return out;
});

/** Tool pairs of a message list that a trim broke: results without their call, calls without all their results. */
export function brokenPairs(input: readonly ConversationMessage[], output: readonly ConversationMessage[]): string[] {
  const calls = new Set(output.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])));
  const results = (list: readonly ConversationMessage[]) => list.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
  const kept = results(output);
  const problems = kept.filter((id) => !calls.has(id)).map((id) => `result ${id} without its call`);
  for (const id of results(input)) if (calls.has(id) && !kept.includes(id)) problems.push(`call ${id} without its result`);
  return problems;
}
