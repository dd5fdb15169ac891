import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, type AnyMachineDefinition } from '@flowing/runtime';
import { approvalMachine, singleToolMachine } from './runtime-machines.ts';

/** charge: a non-idempotent tool (D1); lookup: an idempotent one (D2); pay: a high-risk one behind an approval (D3). */
export type CrashPointMode = 'charge' | 'lookup' | 'pay';

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
