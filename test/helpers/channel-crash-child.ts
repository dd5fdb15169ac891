/**
 * A runtime process for the channel crash test: an `orders` session sends one `billing.need_order` message to the
 * `billing` machine of the same runtime, unless FLOWING_FAULT kills the process between the commit that stores the
 * message and its delivery. Prints `SENT` once the send is applied, `DONE` once the receiver logged the message.
 *
 * Arguments: <store: sqlite:FILE | redis:URL#PREFIX> <project dir with the generated orders and billing machines>
 */
import { createRuntime } from '@flowing/runtime';
import { importChannelMachines } from './channel-machines.ts';
import { openStore } from './store-spec.ts';

const [where, dir] = process.argv.slice(2) as [string, string];

async function main() {
  const { orders, billing } = await importChannelMachines(dir);
  const runtime = createRuntime({ machines: [orders, billing], store: openStore(where) });
  const sender = await runtime.createSession(orders, undefined, { sessionId: 'sender' });
  const result = await sender.send({ type: 'ASK_BILLING', orderId: 'A1', question: 'paid?' });
  if (!result.applied) throw new Error(`refused: ${result.code}`);
  console.log('SENT');
  await new Promise<void>((resolve) => {
    const stop = runtime.session('billing--A1').subscribe(0, (event) => {
      if (event.type !== 'channel.received') return;
      queueMicrotask(stop);
      resolve();
    });
  });
  console.log('DONE');
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
