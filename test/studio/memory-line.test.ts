import { describe, expect, it } from 'vitest';
import { leafSize, memoryLine, NODE_PARTS } from '../../studio/src/graph/index.ts';

const call = (extra: Record<string, unknown>) => ({ llm: 'agent', prompt: 'p', onDone: 'idle', ...extra });

describe('memory line of a call block', () => {
  it('names the conversation, the window and the summary', () => {
    const line = memoryLine(
      call({
        history: 'context.support',
        memory: { window: 20, summarize: { after: 40, keep: ['orderId', 'request'] }, maxPromptTokens: 4000 },
      }),
    );
    expect(line?.text).toBe('memory: support · last 20 · summary');
    expect(line?.source).toBe('support');
    expect(line?.settings).toEqual(['last 20', 'summary']);
    expect(line?.title).toBe(
      'Reads the conversation context.support: the last 20 turns verbatim; older turns are summarised once more than 40 are not (keeps orderId, request); the prompt is kept within 4000 tokens',
    );
  });

  it('says a call without memory settings reads every turn', () => {
    expect(memoryLine(call({ history: 'context.chat' }))?.text).toBe('memory: chat · all turns');
    expect(memoryLine(call({ history: 'context.chat', memory: { window: 1 } }))?.text).toBe('memory: chat · last 1');
  });

  it('shows memory declared without a history as reading none', () => {
    expect(memoryLine(call({ memory: { window: 8 } }))?.text).toBe('memory: no history · last 8');
  });

  it('has no line for a call that reads no conversation, or for a tool or machine call', () => {
    expect(memoryLine(call({}))).toBeUndefined();
    expect(memoryLine({ tool: 'query_order', history: 'context.chat' })).toBeUndefined();
    expect(memoryLine({ machine: 'support-orders' })).toBeUndefined();
    expect(memoryLine(undefined)).toBeUndefined();
  });

  it('draws values the schema refuses as written rather than guessing', () => {
    expect(memoryLine(call({ history: 'context.chat', memory: { window: 'x' } }))?.text).toBe('memory: chat · last x');
    expect(memoryLine(call({ history: 'context.a.b' }))?.text).toBe('memory: context.a.b · all turns');
  });

  it('makes the layout reserve the line under a model call block', () => {
    const plain = leafSize({ invoke: call({}) as never });
    const withMemory = leafSize({ invoke: call({ history: 'context.chat', memory: { window: 4 } }) as never });
    expect(plain.height).toBe(NODE_PARTS.base + NODE_PARTS.modelBlock);
    expect(withMemory.height).toBe(plain.height + NODE_PARTS.memoryLine);
  });
});
