/**
 * A runtime process for the crash-point tests: it runs one session to its end, unless FLOWING_FAULT kills it at a
 * crash point on the way. Its tools append `RAN <idempotency key> <amount>` to the ledger file (outside the process)
 * when they run. Printed: `SESSION <id>` once the session exists, `ACK <seq>` per applied send, `DONE` at the end.
 *
 * Arguments: <mode: charge | lookup | pay> <store: sqlite:FILE | redis:URL#PREFIX> <ledger file>
 */
import { createRuntime } from '@flowing/runtime';
import { openStore } from './store-spec.ts';
import { crashPointMachine, proposingModel, type CrashPointMode } from './crash-point-machines.ts';

const [mode, where, ledger] = process.argv.slice(2) as [CrashPointMode, string, string];

async function main() {
  const { machine, events } = crashPointMachine(mode, ledger);
  const model = mode === 'propose' ? await proposingModel('first run') : undefined;
  const runtime = createRuntime({ machines: [machine], store: openStore(where), ...(model ? { llm: model.llm } : {}) });
  const session = await runtime.createSession(machine);
  console.log(`SESSION ${session.id}`);
  for (const event of events) {
    const result = await session.send(event);
    if (!result.applied) throw new Error(`refused: ${result.code}`);
    console.log(`ACK ${result.events.at(-1)!.seq}`);
  }
  console.log('DONE');
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
