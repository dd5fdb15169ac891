/**
 * Tokens a long support conversation sends to the model, with and without memory: every turn's model request
 * carries the whole conversation (without), or the latest summary and the last turns (with `SUPPORT_MEMORY`: a window
 * of 6 turns, a summary once 16 turns are not summarised; the summary requests are counted too). Summaries come
 * from the scripted model, offline and deterministic. At the end the kept facts (the order id, the request, every
 * answer given) must still be in the prompt: exit 1 otherwise.
 * Run with `npm run bench:conversation [-- turns]` (default 64 turns).
 */
import { pathToFileURL } from 'node:url';
import { applyMemory, createScriptedProvider, loadTokenCounter, messagesTokens, type GenerateRequest } from '@flowing/runtime';
import type { Conversation, MemorySpec } from '@flowing/spec';
import { SUPPORT_MEMORY, supportTurns } from './conversation-script.ts';

export interface ConversationBenchOptions {
  turns?: number;
  memory?: MemorySpec;
  /** Rows of the table every this many turns (default 10). */
  every?: number;
  out?: (line: string) => void;
}

export interface ConversationBenchResult {
  /** Tokens sent per turn: the whole conversation, and with memory (summary requests included). */
  perTurn: Array<{ turn: number; full: number; compressed: number; summary: number }>;
  totals: { full: number; compressed: number; savedPercent: number };
  summaries: number;
  /** Kept facts missing from the last prompt (empty when all are there). */
  missing: string[];
  counter: string;
}

const SYSTEM = 'You are the support assistant of an online shop. Use the tools to look orders up; be brief and exact.';

export async function runConversationBench(options: ConversationBenchOptions = {}): Promise<ConversationBenchResult> {
  const turns = supportTurns(options.turns ?? 64);
  const memory = options.memory ?? SUPPORT_MEMORY;
  const out = options.out ?? ((line: string) => console.log(line));
  const every = options.every ?? 10;
  const counter = await loadTokenCounter();
  const llm = createScriptedProvider();
  const signal = new AbortController().signal;
  const request: GenerateRequest = { kind: 'generate', system: SYSTEM, prompt: '' };
  const fixed = counter.count(SYSTEM);

  const history: Conversation = [];
  const perTurn: ConversationBenchResult['perTurn'] = [];
  let summaries = 0;
  let lastPrompt: Conversation = [];
  for (const [i, turn] of turns.entries()) {
    history.push(turn.user);
    let summaryTokens = 0;
    const made = await applyMemory(request, history, memory, async (summaryRequest) => {
      summaryTokens += counter.count(`${summaryRequest.system ?? ''}\n${summaryRequest.text}`);
      return (await llm.extract(summaryRequest, { signal })).output;
    });
    if (made.summary) {
      history.push(made.summary);
      summaries++;
    }
    lastPrompt = made.history;
    const full =
      fixed +
      messagesTokens(
        counter,
        history.filter((m) => m.role !== 'summary'),
      );
    perTurn.push({ turn: i + 1, full, compressed: made.prompt.tokens, summary: summaryTokens });
    history.push(...turn.replies);
  }

  const total = (pick: (row: (typeof perTurn)[number]) => number) => perTurn.reduce((sum, row) => sum + pick(row), 0);
  const full = total((r) => r.full);
  const compressed = total((r) => r.compressed + r.summary);
  const savedPercent = full === 0 ? 0 : Math.round((1000 * (full - compressed)) / full) / 10;

  out(`tokens sent per model request, ${turns.length} turns, counted with ${counter.name}`);
  out(`memory: window ${memory.window} turns, summary once ${memory.summarize?.after ?? '-'} turns are not summarised`);
  out('  turn   without   with memory   (of which summary)   saved');
  for (const row of perTurn) {
    if (row.turn % every !== 0 && row.turn !== perTurn.length) continue;
    const saved = Math.round((100 * (row.full - row.compressed - row.summary)) / row.full);
    out(
      `  ${String(row.turn).padStart(4)}   ${String(row.full).padStart(7)}   ${String(row.compressed + row.summary).padStart(11)}   ${String(row.summary).padStart(18)}   ${String(saved).padStart(4)}%`,
    );
  }
  out(
    `  total  ${String(full).padStart(7)}   ${String(compressed).padStart(11)}   ${''.padStart(18)}   ${String(savedPercent).padStart(4)}%`,
  );
  out(`summaries made: ${summaries}`);

  const missing = missingFacts(lastPrompt, turns);
  out(missing.length === 0 ? 'kept facts: all in the last prompt' : `kept facts missing from the last prompt: ${missing.join('; ')}`);
  return { perTurn, totals: { full, compressed, savedPercent }, summaries, missing, counter: counter.name };
}

/** The facts the conversation established that the prompt no longer carries, verbatim or in its summary. */
function missingFacts(prompt: Conversation, turns: ReturnType<typeof supportTurns>): string[] {
  const text = JSON.stringify(prompt);
  const last = <T>(list: T[]) => list[list.length - 1];
  const orderId = last(turns.flatMap((t) => [...t.user.content.matchAll(/order (A\d{4})/g)].map((m) => m[1]!)));
  const request = last(turns.flatMap((t) => (t.request ? [t.request] : [])));
  const wanted = [
    ...(orderId ? [{ fact: `order id ${orderId}`, text: orderId }] : []),
    ...(request ? [{ fact: `request "${request}"`, text: request }] : []),
    ...turns.flatMap((t) => (t.answer ? [{ fact: `answer "${t.answer}"`, text: t.answer }] : [])),
  ];
  return wanted.filter(({ text: fact }) => !text.includes(fact)).map(({ fact }) => fact);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const turns = process.argv[2] === undefined ? 64 : Number(process.argv[2]);
  const result = await runConversationBench({ turns });
  process.exitCode = result.missing.length === 0 ? 0 : 1;
}
