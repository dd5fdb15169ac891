import { describe, expect, it } from 'vitest';
import { FlowSpecSchema, schemaProblems, validateSpec } from '../../spec/index.ts';

function spec(invoke: Record<string, unknown>, on: unknown = 'answering'): unknown {
  return {
    specVersion: 1,
    id: 'mini',
    context: { chat: { type: 'conversation' } },
    events: { GO: {} },
    initial: 'idle',
    states: {
      idle: { on: { GO: on } },
      answering: { invoke: { onDone: 'idle', onError: 'idle', ...invoke } },
    },
  };
}

const generate = { llm: 'generate', prompt: 'hi', history: 'context.chat' };
const found = (value: unknown) => validateSpec(value).problems.map((p) => `${p.code} ${p.path}`);

describe('schema problems name the field', () => {
  it('points a wrong memory window into the model call, not at the whole invoke', () => {
    expect(found(spec({ ...generate, memory: { window: 'x' } }))).toEqual(['SPEC_SCHEMA /states/answering/invoke/memory/window']);
  });

  it('points each wrong memory field at its own place when several are wrong', () => {
    const memory = { window: 2.5, summarize: { after: 'often', keep: 7 } };
    expect(found(spec({ ...generate, memory })).sort()).toEqual([
      'SPEC_SCHEMA /states/answering/invoke/memory/summarize/after',
      'SPEC_SCHEMA /states/answering/invoke/memory/summarize/keep',
      'SPEC_SCHEMA /states/answering/invoke/memory/window',
    ]);
  });

  it('names an unknown key of a model call as a key of that call, not as a tool call missing its tool', () => {
    const problems = validateSpec(spec({ ...generate, memmory: { window: 4 } })).problems;
    expect(problems.map((p) => `${p.code} ${p.path}`)).toEqual(['SPEC_SCHEMA /states/answering/invoke']);
    expect(problems[0]!.message).toContain('memmory');
    expect(problems[0]!.message).not.toContain('tool');
  });

  it('follows the branch of a transition the value is written as (an object with a wrong target)', () => {
    expect(found(spec(generate, { target: 5 }))).toEqual(['SPEC_SCHEMA /states/idle/on/GO/target']);
  });

  it('keeps an invoke that fits no kind at all at the invoke', () => {
    const value = spec({}) as { states: { answering: { invoke: unknown } } };
    value.states.answering.invoke = 5;
    expect(found(value)).toEqual(['SPEC_SCHEMA /states/answering/invoke']);
  });

  it('names the missing kind of a call that has only model fields', () => {
    const value = spec({}) as { states: { answering: { invoke: unknown } } };
    value.states.answering.invoke = { prompt: 'hi', onDone: 'idle' };
    expect(found(value)).toEqual(['SPEC_SCHEMA /states/answering/invoke/llm']);
  });

  it('maps the issues of any zod error the same way validation does', () => {
    const value = spec({ ...generate, memory: { window: 'x' } });
    const parsed = FlowSpecSchema.safeParse(value);
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(schemaProblems(parsed.error.issues, value)).toEqual(validateSpec(value).problems);
  });
});
