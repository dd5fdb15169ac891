// One order-support session, with a tracer when `--trace` is given; prints `done <status>` when it is quiet.
import { once } from 'node:events';
import { createRuntime } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

const span = { setAttribute() {}, setStatus() {}, addEvent() {}, updateName() {}, end() {} };
// With a tracer, the runtime reports the tracer it could not load as a process warning: waited for, not slept on.
const warned = process.argv.includes('--trace') ? once(process, 'warning') : undefined;
const tracer = process.argv.includes('--trace') ? { startSpan: () => span } : undefined;
const runtime = createRuntime({ machines: [orderSupport], ...(tracer ? { tracer } : {}) });
const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
if (warned) await warned;
process.stdout.write(`done ${(await session.snapshot()).status}\n`);
