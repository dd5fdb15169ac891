import { describe, expect, it } from 'vitest';
import { validateSpec, type ToolInfo } from '../../spec/index.ts';

/**
 * Agent-calls issue: one approval state whose APPROVE branches by guard to two different high-risk tools asked the
 * person to approve the wrong tool (the runtime keeps one approval per state, and the last branch won). The
 * validator refuses such a state; each high-risk call needs its own approval state.
 */
const tools: Record<string, ToolInfo> = {
  cancel_ticket: { name: 'cancel_ticket', idempotent: false, risk: 'high', inputFields: ['ticket_id'], requiredInputFields: ['ticket_id'] },
  update_ticket_to_new_flight: {
    name: 'update_ticket_to_new_flight',
    idempotent: false,
    risk: 'high',
    inputFields: ['ticket_id', 'flight'],
    requiredInputFields: ['ticket_id', 'flight'],
  },
  send_note: { name: 'send_note', idempotent: true, risk: 'low', inputFields: ['ticket_id'], requiredInputFields: ['ticket_id'] },
};

const done = { onDone: 'idle', onError: 'idle' };
const cancelling = { invoke: { tool: 'cancel_ticket', input: { ticket_id: 'context.ticketId' }, ...done } };
const rebooking = {
  invoke: { tool: 'update_ticket_to_new_flight', input: { ticket_id: 'context.ticketId', flight: "context.flight ?? ''" }, ...done },
};

/** A ticket desk: REQUEST a change, then APPROVE in `confirm` leads wherever `approve` says. */
function ticketDesk(confirm: Record<string, unknown>, more: Record<string, unknown> = {}): unknown {
  return {
    specVersion: 1,
    id: 'ticket-desk',
    context: {
      ticketId: { type: 'string', default: '' },
      action: { type: 'string', default: '' },
      flight: { type: 'string', optional: true },
    },
    events: { REQUEST: { action: { type: 'string' } }, APPROVE: {}, REJECT: {} },
    initial: 'idle',
    states: {
      idle: { on: { REQUEST: { target: 'confirm', assign: { action: 'event.action' } } } },
      confirm,
      cancelling,
      rebooking,
      ...more,
    },
  };
}

describe('an APPROVE that could start one of two high-risk calls', () => {
  it('is refused with SPEC_AMBIGUOUS_APPROVAL at the APPROVE, naming the state and both tools (the reported case)', () => {
    const spec = ticketDesk({
      on: { APPROVE: [{ guard: "context.action == 'cancel'", target: 'cancelling' }, { target: 'rebooking' }], REJECT: 'idle' },
    });
    const { ok, problems } = validateSpec(spec, { tools });
    expect(ok).toBe(false);
    expect(problems.map((p) => [p.code, p.severity, p.path])).toEqual([['SPEC_AMBIGUOUS_APPROVAL', 'error', '/states/confirm/on/APPROVE']]);
    expect(problems[0]!.message).toContain("state 'confirm'");
    expect(problems[0]!.message).toContain("'cancel_ticket' (state 'cancelling')");
    expect(problems[0]!.message).toContain("'update_ticket_to_new_flight' (state 'rebooking')");
  });

  it('is refused when both branches are guarded, too', () => {
    const spec = ticketDesk({
      on: {
        APPROVE: [
          { guard: "context.action == 'cancel'", target: 'cancelling' },
          { guard: "context.action == 'rebook'", target: 'rebooking' },
        ],
        REJECT: 'idle',
      },
    });
    expect(validateSpec(spec, { tools }).problems.map((p) => p.code)).toEqual(['SPEC_AMBIGUOUS_APPROVAL']);
  });

  it('is accepted once each high-risk call has its own approval state', () => {
    const spec = ticketDesk(
      { always: [{ guard: "context.action == 'cancel'", target: 'confirm_cancel' }, { target: 'confirm_rebook' }] },
      {
        confirm_cancel: { on: { APPROVE: 'cancelling', REJECT: 'idle' } },
        confirm_rebook: { on: { APPROVE: 'rebooking', REJECT: 'idle' } },
      },
    );
    expect(validateSpec(spec, { tools }).problems).toEqual([]);
  });

  it('is accepted when only one of the branches runs a high-risk tool', () => {
    const spec = ticketDesk(
      { on: { APPROVE: [{ guard: "context.action == 'cancel'", target: 'cancelling' }, { target: 'noting' }], REJECT: 'idle' } },
      { noting: { invoke: { tool: 'send_note', input: { ticket_id: 'context.ticketId' }, ...done } }, rebooking: { type: 'final' } },
    );
    expect(validateSpec(spec, { tools }).problems.filter((p) => p.code === 'SPEC_AMBIGUOUS_APPROVAL')).toEqual([]);
  });
});
