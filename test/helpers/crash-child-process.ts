/**
 * A runtime process for the child-session crash tests: it starts a `desk` session whose state invokes the `billing`
 * machine, then approves the child's refund through the parent's id, unless FLOWING_FAULT kills it at a crash point
 * on the way. `pay` appends `RAN <idempotency key> <amount>` to the ledger file when it runs. Printed: `SESSION <id>`
 * once the parent exists, `ACK <seq>` per applied send, `DONE` at the end.
 *
 * Arguments: <store: sqlite:FILE | redis:URL#PREFIX> <ledger file>
 */
import { createRuntime } from '@flowing/runtime';
import { crashChildMachines } from './child-machines.ts';
import { openStore } from './store-spec.ts';

const [where, ledger] = process.argv.slice(2) as [string, string];

async function main() {
  const { desk, billing } = crashChildMachines(ledger);
  const runtime = createRuntime({ machines: [desk, billing], store: openStore(where) });
  const session = await runtime.createSession('desk');
  console.log(`SESSION ${session.id}`);
  for (const event of [{ type: 'START', orderId: 'A1' }, { type: 'APPROVE' }]) {
    const result = await session.send(event);
    if (!result.applied) throw new Error(`refused: ${result.code}`);
    console.log(`ACK ${result.applied}`);
  }
  console.log('DONE');
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
