import { describe, expect, it } from 'vitest';
import { validateSpec, type ToolInfo } from '../../spec/index.ts';

const tools: Record<string, ToolInfo> = {
  fetch_trip: {
    name: 'fetch_trip',
    idempotent: true,
    risk: 'low',
    inputFields: ['trip_id', 'customer_id'],
    requiredInputFields: ['trip_id'],
  },
  lookup: { name: 'lookup', idempotent: true, risk: 'low', inputFields: ['id'], requiredInputFields: ['id'] },
};

function spec(invoke: Record<string, unknown>): unknown {
  return {
    specVersion: 1,
    id: 'mini',
    context: { customerId: { type: 'string', default: '' }, text: { type: 'string', default: '' } },
    events: { GO: {} },
    initial: 'idle',
    states: {
      idle: { on: { GO: 'helping' } },
      helping: { invoke: { onDone: 'idle', onError: 'idle', ...invoke } },
    },
  };
}

const agent = {
  llm: 'agent',
  prompt: '{{ context.text }}',
  tools: ['lookup', { tool: 'fetch_trip', bind: { customer_id: 'context.customerId' } }],
  output: { intent: { type: 'enum', values: ['a', 'b'] }, ids: { type: 'array', items: { type: 'string' } } },
  temperature: 0.3,
  topP: 0.9,
  scripted: { keywords: { a: ['alpha'] }, patterns: { ids: '[A-Z][0-9]+' } },
};
const problems = (invoke: Record<string, unknown>) =>
  validateSpec(spec(invoke), { tools })
    .problems.filter((p) => p.severity === 'error')
    .map((p) => [p.code, p.path]);

describe('agent calls in the spec', () => {
  it('accepts bound tools, structured output, sampling settings and scripted rules for the output fields', () => {
    expect(problems(agent)).toEqual([]);
  });

  it('refuses a bound expression that reads the event, a field the tool lacks and an empty binding', () => {
    expect(problems({ ...agent, tools: [{ tool: 'fetch_trip', bind: { customer_id: 'event.id', trip: 'context.text' } }] })).toEqual([
      ['SPEC_EXPRESSION_UNKNOWN_ROOT', '/states/helping/invoke/tools/0/bind/customer_id'],
      ['SPEC_UNKNOWN_TOOL_INPUT', '/states/helping/invoke/tools/0/bind/trip'],
    ]);
    expect(problems({ ...agent, tools: [{ tool: 'fetch_trip', bind: {} }] })).toEqual([
      ['SPEC_LLM_INCOMPLETE', '/states/helping/invoke/tools/0/bind'],
    ]);
  });

  it('refuses the same tool listed twice, bound or not', () => {
    expect(
      problems({ ...agent, tools: ['fetch_trip', { tool: 'fetch_trip', bind: { customer_id: 'context.customerId' } }] }).map((p) => p[0]),
    ).toContain('SPEC_DUPLICATE_NAME');
  });

  it('refuses output on a call kind other than agent, and sampling settings out of range', () => {
    expect(problems({ llm: 'classify', input: 'context.text', labels: ['a'], output: agent.output })).toEqual([
      ['SPEC_LLM_FIELD_NOT_ALLOWED', '/states/helping/invoke/output'],
    ]);
    expect(problems({ ...agent, temperature: 3 }).map((p) => p[0])).toEqual(['SPEC_SCHEMA']);
  });
});

describe('agent handoffs in the spec', () => {
  const at = '/states/helping/invoke';
  const triage = {
    llm: 'agent',
    prompt: '{{ context.text }}',
    handoffs: ['billing', 'refunds'],
    scripted: { handoffs: { billing: ['invoice'], refunds: ['refund'] } },
  };

  it('accepts an agent with handoffs and no tools, with scripted keywords per target', () => {
    expect(problems(triage)).toEqual([]);
    expect(problems({ ...agent, handoffs: ['billing'] })).toEqual([]);
  });

  it('refuses an agent with neither tools nor handoffs', () => {
    expect(problems({ llm: 'agent', prompt: 'hi' })).toEqual([['SPEC_LLM_INCOMPLETE', `${at}/tools`]]);
  });

  it('refuses a handoff name outside NAME_PATTERN, a duplicate, and one whose tool clashes with an agent tool', () => {
    expect(problems({ ...triage, handoffs: ['billing', 'bad-name', 'billing'], scripted: undefined })).toEqual([
      ['SPEC_INVALID_IDENTIFIER', `${at}/handoffs/1`],
      ['SPEC_DUPLICATE_NAME', `${at}/handoffs/2`],
    ]);
    const clashing = { ...tools, transfer_to_billing: { name: 'transfer_to_billing', idempotent: true, risk: 'low' as const } };
    expect(
      validateSpec(spec({ ...triage, tools: ['transfer_to_billing'] }), { tools: clashing })
        .problems.filter((p) => p.severity === 'error')
        .map((p) => [p.code, p.path]),
    ).toEqual([['SPEC_HANDOFF_CLASH', `${at}/handoffs/0`]]);
  });

  it('refuses handoffs on other call kinds and scripted keywords for an undeclared target', () => {
    expect(problems({ llm: 'generate', prompt: 'hi', handoffs: ['billing'] })).toEqual([['SPEC_LLM_FIELD_NOT_ALLOWED', `${at}/handoffs`]]);
    expect(problems({ ...triage, scripted: { handoffs: { shipping: ['parcel'] } } })).toEqual([
      ['SPEC_LLM_FIELD_NOT_ALLOWED', `${at}/scripted/handoffs/shipping`],
    ]);
  });
});

describe('high-risk tools handed to an agent', () => {
  it('are accepted (bound or not): the model only proposes their calls, and a person approves each', () => {
    const risky = { ...tools, pay: { name: 'pay', idempotent: false, risk: 'high' as const, inputFields: ['amount', 'account'] } };
    const errors = (invoke: Record<string, unknown>) =>
      validateSpec(spec(invoke), { tools: risky })
        .problems.filter((p) => p.severity === 'error')
        .map((p) => p.code);
    expect(errors({ ...agent, tools: ['lookup', 'pay'] })).toEqual([]);
    expect(errors({ ...agent, tools: [{ tool: 'pay', bind: { account: 'context.customerId' } }] })).toEqual([]);
  });
});
