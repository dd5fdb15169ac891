import { describe, expect, it } from 'vitest';
import { diffCase, type CaseExpectation, type CaseStep, type Observation } from '@flowing/runtime/testing';

const RECORDED: CaseStep[] = [
  { state: 'idle' },
  { tool: 'query_order', input: { order_id: 'A1' } },
  { state: 'reply' },
  { reply: 'shipped' },
];

function expectation(steps: CaseStep[]): CaseExpectation {
  return { type: 'expect', status: 'waiting', steps, context: {} };
}

/** A replay that agrees with the recording on everything but its steps: same status, same (empty) context. */
function observed(steps: CaseStep[]): Observation {
  return { status: 'waiting', steps, context: {}, transitions: [], stateValues: [], modelCalls: 0, tokens: 0 } as Observation;
}

describe('flowing test compares the whole timeline, not its common prefix', () => {
  it('fails when the edited machine does everything recorded and then one step more', () => {
    const longer = [...RECORDED, { tool: 'refund', input: { amount: 10 } }];
    const diff = diffCase(expectation(RECORDED), observed(longer), [], []);
    expect(diff.ok).toBe(false);
    expect(diff.firstStep).toBe(RECORDED.length);
    expect(diff.first).toBe('step 5: recorded nothing (the session had stopped), now tool refund {"amount":10}');
  });

  it('fails when the edited machine stops one step short of the recording', () => {
    const shorter = RECORDED.slice(0, -1);
    const diff = diffCase(expectation(RECORDED), observed(shorter), [], []);
    expect(diff.ok).toBe(false);
    expect(diff.firstStep).toBe(RECORDED.length - 1);
    expect(diff.first).toBe('step 4: recorded reply "shipped", now nothing (the session had stopped)');
  });

  it('passes when the timelines are equal', () => {
    expect(diffCase(expectation(RECORDED), observed(RECORDED.slice()), [], []).ok).toBe(true);
  });
});
