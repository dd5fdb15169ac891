import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, type AnyMachineDefinition } from '@flowing/runtime';
import { createOpenAIProvider } from '@flowing/runtime/openai';
import { payAgent } from './agent-approvals.ts';
import { reply, startFakeOpenAI, toolCalls } from './fake-openai.ts';
import { approvalMachine, singleToolMachine } from './runtime-machines.ts';

/**
 * charge: a non-idempotent tool (D1); lookup: an idempotent one (D2); pay: a high-risk one behind an approval (D3);
 * propose: a high-risk, non-idempotent one an agent's model proposes (see proposingModel), then approved.
 */
export type CrashPointMode = 'charge' | 'lookup' | 'pay' | 'propose';

/** A tool that appends `RAN <idempotency key> <amount>` to the ledger file when it runs, then answers. */
export function ledgerTool(name: string, ledger: string, options: { idempotent: boolean; risk: 'low' | 'high' }) {
  return defineTool({
    name,
    description: 'records each run in a ledger outside the process',
    input: z.object({ amount: z.number() }),
    output: z.object({ receipt: z.string() }),
    idempotent: options.idempotent,
    risk: options.risk,
    async run(input, { idempotencyKey }) {
      appendFileSync(ledger, `RAN ${idempotencyKey} ${input.amount}\n`);
      return { receipt: `r-${input.amount}` };
    },
  });
}

/** The machine of a mode, and the events its session is sent (two tool steps, or a request and its approval). */
export function crashPointMachine(
  mode: CrashPointMode,
  ledger: string,
): { machine: AnyMachineDefinition; events: Array<{ type: string; [key: string]: unknown }> } {
  if (mode === 'propose') {
    return {
      machine: payAgent({ pay: ledgerTool('pay', ledger, { idempotent: false, risk: 'high' }) }, { bindAccount: false }),
      events: [{ type: 'ASK', text: 'pay 25' }, { type: 'APPROVE' }],
    };
  }
  if (mode === 'pay') {
    return {
      machine: approvalMachine(ledgerTool('pay', ledger, { idempotent: true, risk: 'high' })),
      events: [{ type: 'REQUEST', amount: 25 }, { type: 'APPROVE' }],
    };
  }
  const tool = ledgerTool(mode, ledger, { idempotent: mode === 'lookup', risk: 'low' });
  return {
    machine: singleToolMachine(tool),
    events: [
      { type: 'RUN', args: { amount: 1 } },
      { type: 'RUN', args: { amount: 2 } },
    ],
  };
}

/**
 * The model of the `propose` mode, from a fake OpenAI-compatible server started in this process: it proposes
 * `pay {amount: 25}`, then answers `Paid.` (and `Paid.` again to a process that resumes the session).
 */
export async function proposingModel(turns: 'first run' | 'resumed') {
  const fake = await startFakeOpenAI();
  if (turns === 'first run') fake.enqueue(toolCalls([{ id: 'p1', name: 'pay', arguments: '{"amount":25}' }]), reply('Paid.'));
  else fake.enqueue(reply('Paid.'));
  return { fake, llm: createOpenAIProvider({ baseURL: fake.baseURL, apiKey: 'test-key', model: 'fake-agent', timeoutMs: 5_000 }) };
}
