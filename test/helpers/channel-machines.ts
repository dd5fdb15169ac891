import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validateSpec, type FlowSpecInput } from '@flowing/spec';
import { generate } from '../../codegen/index.ts';

/** A sender: ASK_BILLING emits `billing.need_order` keyed by the order id; AUDIT emits on a channel nobody listens to. */
export const ORDERS: FlowSpecInput = {
  specVersion: 1,
  id: 'orders',
  context: { orderId: { type: 'string', default: '' } },
  events: { ASK_BILLING: { orderId: { type: 'string' }, question: { type: 'string' } }, AUDIT: {} },
  initial: 'idle',
  states: {
    idle: {
      on: {
        ASK_BILLING: {
          target: 'idle',
          assign: { orderId: 'event.orderId' },
          emit: [{ channel: 'billing.need_order', key: 'event.orderId', data: { orderId: 'event.orderId', question: 'event.question' } }],
        },
        AUDIT: { target: 'idle', emit: [{ channel: 'audit.note', key: 'context.orderId', data: {} }] },
      },
    },
  },
};

/** A receiver: listens to `billing.*`, one session per order id, counting the questions it got. */
export const BILLING: FlowSpecInput = {
  specVersion: 1,
  id: 'billing',
  channels: { listen: ['billing.*'], key: 'orderId' },
  context: {
    orderId: { type: 'string', default: '' },
    questions: { type: 'number', default: 0 },
    lastQuestion: { type: 'string', optional: true },
  },
  events: { BILLING_NEED_ORDER: { orderId: { type: 'string' }, question: { type: 'string' } } },
  initial: 'open',
  states: {
    open: {
      on: { BILLING_NEED_ORDER: { target: 'open', assign: { questions: 'context.questions + 1', lastQuestion: 'event.question' } } },
    },
  },
};

export const specOf = (input: FlowSpecInput) => validateSpec(input).spec!;

/** Writes the generated code of `inputs` into `<dir>/machines/<id>/` (a project `flowing serve` can serve). */
export async function writeChannelMachines(dir: string, inputs: readonly FlowSpecInput[]): Promise<void> {
  for (const input of inputs) {
    const spec = specOf(input);
    await mkdir(join(dir, 'machines', spec.id), { recursive: true });
    for (const file of generate(spec)) await writeFile(join(dir, file.path), file.text);
    await writeFile(join(dir, 'machines', spec.id, `${spec.id}.flow.json`), JSON.stringify(input, null, 2));
  }
}

/** Imports the generated machines of `orders` and `billing` written by writeChannelMachines. */
export async function importChannelMachines(dir: string): Promise<{ orders: any; billing: any }> {
  return {
    orders: (await import(join(dir, 'machines/orders/orders.machine.ts'))).orders,
    billing: (await import(join(dir, 'machines/billing/billing.machine.ts'))).billing,
  };
}

/**
 * ORDERS and BILLING renamed into their own namespace (`relay-orders` sends on `relay.need_order` to `relay-billing`),
 * for projects served with `flowing serve`, which also serves the package's example machines (whose `billing.*`
 * would overlap BILLING's).
 */
export function relaySpecs(): [FlowSpecInput, FlowSpecInput] {
  const rename = (input: FlowSpecInput) =>
    JSON.parse(
      JSON.stringify(input)
        .replaceAll('"billing.need_order"', '"relay.need_order"')
        .replaceAll('"billing.*"', '"relay.*"')
        .replaceAll('BILLING_NEED_ORDER', 'RELAY_NEED_ORDER')
        .replace('"id":"billing"', '"id":"relay-billing"')
        .replace('"id":"orders"', '"id":"relay-orders"'),
    ) as FlowSpecInput;
  return [rename(ORDERS), rename(BILLING)];
}
