import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assemblePrompt,
  CHARS_PER_TOKEN_ESTIMATE,
  createScriptedProvider,
  FlowingError,
  loadTokenCounter,
  messagesTokens,
  summaryDue,
  summaryMessage,
  summaryRequest,
} from '@flowing/runtime';
import type { ConversationMessage, MemorySpec } from '@flowing/spec';
import { brokenPairs, conversation } from './conversations.ts';

const user = (content: string): ConversationMessage => ({ role: 'user', content });
const said = (content: string): ConversationMessage => ({ role: 'assistant', content });

/** n turns of a question and an answer. */
function turns(n: number, from = 1): ConversationMessage[] {
  return Array.from({ length: n }, (_, i) => [user(`question ${from + i} about order A${from + i}`), said(`answer ${from + i}`)]).flat();
}

describe('token counting', () => {
  it('counts with gpt-tokenizer when it can be imported', async () => {
    const counter = await loadTokenCounter();
    expect(counter.name).toBe('gpt-tokenizer');
    expect(counter.count('hello world')).toBe(2);
  });

  it('falls back to a chars/4 estimate, and says so, when gpt-tokenizer cannot be imported', async () => {
    const counter = await loadTokenCounter(() => Promise.reject(new Error("Cannot find package 'gpt-tokenizer'")));
    expect(counter.name).toBe('chars/4');
    expect(counter.count('12345678')).toBe(2);
    const prompt = assemblePrompt(turns(2), { window: 4 }, { counter });
    expect(prompt.counter).toBe('chars/4');
  });
});

describe('assemblePrompt', () => {
  const counter = CHARS_PER_TOKEN_ESTIMATE;

  it('sends the latest summary, then the window of turns after what it covers', () => {
    const history = [...turns(3), summaryMessage({ content: 'earlier', orderId: 'A1' }, 4), ...turns(3, 4)];
    const prompt = assemblePrompt(history, { window: 2 }, { counter });
    expect(prompt.messages[0]).toMatchObject({ role: 'summary', facts: { orderId: 'A1' } });
    expect(prompt.messages.slice(1).map((m) => m.content)).toEqual([
      'question 5 about order A5',
      'answer 5',
      'question 6 about order A6',
      'answer 6',
    ]);
    expect(prompt.omitted).toBe(8);
    expect(prompt.droppedTurns).toBe(0);
  });

  it('drops the oldest whole turns until the prompt fits its token limit', () => {
    const history = turns(6);
    const all = assemblePrompt(history, { window: 6 }, { counter });
    const oneTurn = messagesTokens(counter, history.slice(10));
    const prompt = assemblePrompt(history, { window: 6 }, { counter, maxTokens: oneTurn * 2 + 10, fixedTokens: 10 });
    expect(prompt.messages).toEqual(history.slice(8));
    expect(prompt.droppedTurns).toBe(4);
    expect(prompt.tokens).toBeLessThanOrEqual(oneTurn * 2 + 10);
    expect(all.tokens).toBeGreaterThan(prompt.tokens);
  });

  it('refuses with LLM_PROMPT_TOO_LARGE when even the last turn does not fit, naming the sizes', () => {
    let thrown: unknown;
    try {
      assemblePrompt(turns(2), { window: 2 }, { counter, maxTokens: 5 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FlowingError);
    expect((thrown as FlowingError).code).toBe('LLM_PROMPT_TOO_LARGE');
    expect((thrown as FlowingError).message).toMatch(/about \d+ tokens \(chars\/4\) .* limit of 5/);
  });

  it('keeps tool calls with their results under any window and token limit, over random conversations', () => {
    fc.assert(
      fc.property(conversation, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 10, max: 400 }), (history, window, maxTokens) => {
        try {
          const prompt = assemblePrompt(history, { window }, { counter, maxTokens });
          expect(brokenPairs(history, prompt.messages)).toEqual([]);
          expect(prompt.tokens).toBeLessThanOrEqual(maxTokens);
        } catch (error) {
          expect((error as FlowingError).code).toBe('LLM_PROMPT_TOO_LARGE');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('summaries', () => {
  const memory: MemorySpec = {
    window: 2,
    summarize: {
      after: 3,
      keep: { orderId: { type: 'string', optional: true }, asked: { type: 'array', items: { type: 'string' } } },
      scripted: { patterns: { orderId: 'order (A\\d+)', asked: 'user: (question \\d+)' } },
    },
  };

  it('are due once more turns than `after` are not covered, and fold everything before the window', () => {
    expect(summaryDue(turns(3), memory)).toBeUndefined();
    const plan = summaryDue(turns(4), memory)!;
    expect(plan.covers).toBe(4);
    expect(plan.fold).toEqual(turns(2));
    expect(plan.previous).toBeUndefined();
  });

  it('are made offline by the scripted provider: the last value of each fact, lists grown, rolling on from the previous summary', async () => {
    const llm = createScriptedProvider();
    const signal = new AbortController().signal;
    const first = summaryDue(turns(4), memory)!;
    const made = await llm.extract(summaryRequest(first, memory, {}), { signal });
    const summary = summaryMessage(made.output, first.covers);
    expect(summary).toMatchObject({ role: 'summary', covers: 4, facts: { orderId: 'A2', asked: ['question 1', 'question 2'] } });
    expect(summary.content).toContain('orderId: A2');

    const later = [...turns(4), summary, ...turns(4, 5)];
    const second = summaryDue(later, memory)!;
    expect(second.previous).toEqual(summary);
    expect(second.covers).toBe(later.length - 4);
    const again = summaryMessage((await llm.extract(summaryRequest(second, memory, {}), { signal })).output, second.covers);
    expect(again.facts).toEqual({
      orderId: 'A6',
      asked: ['question 1', 'question 2', 'question 3', 'question 4', 'question 5', 'question 6'],
    });
    // The prompt then carries the newest summary and the window.
    const prompt = assemblePrompt([...later, again], memory, { counter: CHARS_PER_TOKEN_ESTIMATE });
    expect(prompt.messages[0]).toEqual(again);
    expect(prompt.messages).toHaveLength(5);
  });
});
