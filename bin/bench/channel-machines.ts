import { assign, emit, setup } from 'xstate';
import { defineMachine, type AnyMachineDefinition } from '@flowing/runtime';
import { FlowSpecSchema, type FlowSpecInput } from '@flowing/spec';

/** The sender of the channel benchmark: each SEND emits `bench.ping` keyed by its `key`. */
const senderSpec: FlowSpecInput = {
  specVersion: 1,
  id: 'bench-sender',
  events: { SEND: { key: { type: 'string' }, n: { type: 'number' } } },
  initial: 'idle',
  states: {
    idle: { on: { SEND: { target: 'idle', emit: [{ channel: 'bench.ping', key: 'event.key', data: { n: 'event.n' } }] } } },
  },
};

/** The receiver: listens to `bench.*`, one session per key, counting the pings. */
const receiverSpec: FlowSpecInput = {
  specVersion: 1,
  id: 'bench-receiver',
  channels: { listen: ['bench.*'], key: 'key' },
  context: { key: { type: 'string', default: '' }, pings: { type: 'number', default: 0 } },
  events: { BENCH_PING: { n: { type: 'number' } } },
  initial: 'open',
  states: { open: { on: { BENCH_PING: { target: 'open', assign: { pings: 'context.pings + 1' } } } } },
};

type SendEvent = { type: 'SEND'; key: string; n: number };

export const benchSender: AnyMachineDefinition = defineMachine({
  id: 'bench-sender',
  specHash: 'bench-sender',
  spec: FlowSpecSchema.parse(senderSpec),
  machine: setup({ types: {} as { events: SendEvent } }).createMachine({
    id: 'bench-sender',
    initial: 'idle',
    states: {
      idle: {
        on: {
          SEND: {
            target: 'idle',
            actions: emit(({ event }) => ({ type: 'flowing.channel', channel: 'bench.ping', key: event.key, data: { n: event.n } })),
          },
        },
      },
    },
  }),
  tools: {},
});

export const benchReceiver: AnyMachineDefinition = defineMachine({
  id: 'bench-receiver',
  specHash: 'bench-receiver',
  spec: FlowSpecSchema.parse(receiverSpec),
  machine: setup({
    types: {} as {
      context: { key: string; pings: number };
      events: { type: 'BENCH_PING'; n: number };
      input: { key?: string } | undefined;
    },
  }).createMachine({
    id: 'bench-receiver',
    context: ({ input }) => ({ key: '', pings: 0, ...input }),
    initial: 'open',
    states: { open: { on: { BENCH_PING: { target: 'open', actions: assign({ pings: ({ context }) => context.pings + 1 }) } } } },
  }),
  tools: {},
});
