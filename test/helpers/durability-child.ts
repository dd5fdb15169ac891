/**
 * A runtime process for the durability tests, killed with SIGKILL by its parent. It prints one line per fact the
 * parent may rely on, after the promise that makes it true has resolved:
 *   SESSION <id>      a session was created
 *   ACK <id> <seq>    a send to that session resolved as applied; its events up to <seq> were acknowledged
 * Tools append `RAN <idempotency key>` to the ledger file (outside the process) when they start, then kill their own
 * process with SIGKILL: a crash at the first moment a side effect could happen, with nothing after it.
 *
 * Arguments: <mode: sends | charge | pay> <store: sqlite:FILE | redis:URL#PREFIX> [ledger file]
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { createRuntime, defineTool } from '@flowing/runtime';
import { approvalMachine, singleToolMachine } from './runtime-machines.ts';
import { openStore } from './store-spec.ts';

const [mode, where, ledger] = process.argv.slice(2);

/** A tool that records in the ledger that it ran, then crashes the process (SIGKILL) before it can answer. */
const crashing = (name: string, options: { idempotent: boolean; risk: 'low' | 'high' }) =>
  defineTool({
    name,
    description: 'records that it ran, then the process dies',
    input: z.object({ amount: z.number() }),
    output: z.object({ receipt: z.string() }),
    idempotent: options.idempotent,
    risk: options.risk,
    timeoutMs: 600_000,
    async run(_input, { idempotencyKey }) {
      appendFileSync(ledger!, `RAN ${idempotencyKey}\n`);
      process.kill(process.pid, 'SIGKILL');
      return await new Promise<never>(() => {});
    },
  });

const echo = defineTool({
  name: 'echo',
  description: 'answers at once',
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  idempotent: true,
  async run(input) {
    return input;
  },
});

async function main() {
  const store = openStore(where!);
  if (mode === 'sends') {
    // Several sessions at once, so one kill lands at different points of different commits.
    const machine = singleToolMachine(echo);
    const runtime = createRuntime({ machines: [machine], store });
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const session = await runtime.createSession(machine);
        console.log(`SESSION ${session.id}`);
        for (let n = 1; ; n++) {
          const result = await session.send({ type: 'RUN', args: { n } });
          if (!result.applied) throw new Error(`refused: ${result.code}`);
          console.log(`ACK ${session.id} ${result.events.at(-1)!.seq}`);
        }
      }),
    );
  }
  if (mode === 'charge') {
    const machine = singleToolMachine(crashing('charge', { idempotent: false, risk: 'low' }));
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    console.log(`SESSION ${session.id}`);
    await session.send({ type: 'RUN', args: { amount: 25 } });
  }
  if (mode === 'pay') {
    const machine = approvalMachine(crashing('pay', { idempotent: true, risk: 'high' }));
    const runtime = createRuntime({ machines: [machine], store });
    const session = await runtime.createSession(machine);
    console.log(`SESSION ${session.id}`);
    await session.send({ type: 'REQUEST', amount: 25 });
    await session.send({ type: 'APPROVE' });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
