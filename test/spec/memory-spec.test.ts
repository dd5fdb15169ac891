import { describe, expect, it } from 'vitest';
import { computeCost, MAX_LLM_REPAIRS, memoryFacts, validateSpec, type FlowSpec, type LlmInvokeSpec } from '../../spec/index.ts';
import { checkMemory } from '../../spec/memory.ts';

function spec(invoke: Record<string, unknown>): unknown {
  return {
    specVersion: 1,
    id: 'mini',
    context: { text: { type: 'string', default: '' }, chat: { type: 'conversation' } },
    events: { GO: {} },
    initial: 'idle',
    states: {
      idle: { on: { GO: 'answering' } },
      answering: { invoke: { llm: 'generate', prompt: '{{ context.text }}', onDone: 'idle', onError: 'idle', ...invoke } },
    },
  };
}

const errors = (invoke: Record<string, unknown>) =>
  validateSpec(spec(invoke))
    .problems.filter((p) => p.severity === 'error')
    .map((p) => `${p.code} ${p.path}`);

/** The memory checks of an invoke that reads a conversation (`history` is declared by the conversation type). */
function memoryProblems(memory: unknown): string[] {
  const out: string[] = [];
  const invoke = { llm: 'generate', prompt: 'p', history: 'context.chat', memory } as unknown as LlmInvokeSpec;
  checkMemory(invoke, ['states', 'answering', 'invoke'], (code, at) => out.push(`${code} /${at.join('/')}`));
  return out;
}

describe('memory on a model call', () => {
  it('is refused without a history to trim, naming the invoke (SPEC_MEMORY_WITHOUT_HISTORY)', () => {
    expect(errors({ memory: { window: 4 } })).toEqual(['SPEC_MEMORY_WITHOUT_HISTORY /states/answering/invoke/memory']);
  });

  it('accepts a window, a summary threshold above it, kept facts and token limit when the call reads a history', () => {
    const memory = { window: 8, summarize: { after: 20, keep: ['orderId', 'request'] }, maxPromptTokens: 2000 };
    expect(errors({ history: 'context.chat', memory })).toEqual([]);
    expect(errors({ llm: 'classify', labels: ['a', 'b'], prompt: undefined, history: 'context.chat', memory })).toEqual([]);
  });

  it('refuses a window under one turn and a summary threshold not above the window, with pointers', () => {
    expect(memoryProblems({ window: 0 })).toEqual(['SPEC_INVALID_MEMORY /states/answering/invoke/memory/window']);
    expect(memoryProblems({ window: 8, summarize: { after: 8 } })).toEqual([
      'SPEC_INVALID_MEMORY /states/answering/invoke/memory/summarize/after',
    ]);
  });

  it("refuses a kept fact named after the summary's own text, a repeated fact and a pattern for no kept fact", () => {
    expect(
      memoryProblems({
        window: 2,
        summarize: { after: 6, keep: ['orderId', 'content', 'orderId'], scripted: { patterns: { total: 'x' } } },
      }),
    ).toEqual([
      'SPEC_INVALID_MEMORY /states/answering/invoke/memory/summarize/keep/1',
      'SPEC_DUPLICATE_NAME /states/answering/invoke/memory/summarize/keep/2',
      'SPEC_LLM_FIELD_NOT_ALLOWED /states/answering/invoke/memory/summarize/scripted/patterns/total',
    ]);
  });

  it('checks kept fact names like any field, through the validator', () => {
    expect(errors({ memory: { window: 2, summarize: { after: 6, keep: ['order id'] } } })).toContain(
      'SPEC_INVALID_IDENTIFIER /states/answering/invoke/memory/summarize/keep/0',
    );
  });

  it('keeps named facts as optional text and typed facts as declared', () => {
    expect(memoryFacts({ window: 1, summarize: { after: 3, keep: ['orderId'] } })).toEqual({ orderId: { type: 'string', optional: true } });
    const typed = { answersGiven: { type: 'array' as const, items: { type: 'string' as const } } };
    expect(memoryFacts({ window: 1, summarize: { after: 3, keep: typed } })).toEqual(typed);
  });
});

describe('cost bound of a call with summaries (hand-computed)', () => {
  it('counts the summary extract (1 + 2 repairs) before the call, within its maxTokens each', () => {
    const machine = {
      specVersion: 1,
      id: 'memo',
      context: {},
      events: {},
      initial: 'talk',
      states: {
        talk: {
          invoke: {
            llm: 'generate',
            prompt: 'go',
            maxTokens: 100,
            memory: { window: 2, summarize: { after: 6, keep: ['orderId'] } },
            onDone: 'end',
            onError: 'end',
          },
        },
        trim: { invoke: { llm: 'generate', prompt: 'go', maxTokens: 100, memory: { window: 2 }, onDone: 'end', onError: 'end' } },
        end: { type: 'final' },
      },
    } as unknown as FlowSpec;
    const cost = computeCost(machine, {});
    expect(MAX_LLM_REPAIRS).toBe(2);
    // generate: 1 request of 100 tokens; the summary: an extract, 1 + 2 repairs of 100 tokens each.
    expect(cost.calls.talk!.cost).toEqual({ modelCalls: 1 + 3, toolCalls: 0, tokens: 100 + 300 });
    expect(cost.calls.talk!.note).toContain('summary first');
    // Trimming alone makes no model call.
    expect(cost.calls.trim!.cost).toEqual({ modelCalls: 1, toolCalls: 0, tokens: 100 });
  });
});
