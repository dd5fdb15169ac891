import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trimToWindow } from '@flowing/runtime';
import type { ConversationMessage } from '@flowing/spec';
import { brokenPairs, conversation } from './conversations.ts';

const user = (content: string): ConversationMessage => ({ role: 'user', content });
const said = (content: string): ConversationMessage => ({ role: 'assistant', content });
const asked = (id: string): ConversationMessage => ({ role: 'assistant', content: '', toolCalls: [{ id, name: 'lookup', args: {} }] });
const result = (id: string): ConversationMessage => ({ role: 'tool', toolCallId: id, name: 'lookup', content: '{}', ok: true });

describe('trimToWindow', () => {
  it('keeps the last N turns verbatim, a turn starting at a user message', () => {
    const history = [user('a'), said('1'), user('b'), said('2'), user('c'), said('3')];
    expect(trimToWindow(history, 2)).toEqual(history.slice(2));
    expect(trimToWindow(history, 1)).toEqual(history.slice(4));
    expect(trimToWindow(history, 9)).toEqual(history);
  });

  it("grows back to a tool call's turn when its result comes after the window's first user message", () => {
    const history = [user('a'), asked('c1'), user('b'), result('c1'), said('done'), user('c'), said('ok')];
    expect(trimToWindow(history, 2)).toEqual(history);
    expect(trimToWindow(history, 1)).toEqual(history.slice(5));
  });

  it('never separates a tool call from its results, over random conversations', () => {
    fc.assert(
      fc.property(conversation, fc.integer({ min: 1, max: 6 }), (history, window) => {
        const kept = trimToWindow(history, window);
        expect(brokenPairs(history, kept)).toEqual([]);
        // A suffix of whole turns holding at least the last `window` turns.
        expect(kept).toEqual(history.slice(history.length - kept.length));
        if (kept.length < history.length) expect(kept[0]?.role).toBe('user');
        const users = (list: ConversationMessage[]) => list.filter((m) => m.role === 'user').length;
        expect(users(kept)).toBeGreaterThanOrEqual(Math.min(window, users(history)));
      }),
      { numRuns: 500 },
    );
  });
});
