import { createActor, fromPromise, type AnyActorLogic, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import type { AnyMachineDefinition, AnyTool, LlmRequest, Runtime } from '@flowing/runtime';
import { benchModel } from './model.ts';

/** The message every benchmark session handles: classify, extract, 3 tools, generate. */
export const BENCH_MESSAGE = 'where is my order A1001';

const noLog = () => {};

/** One tool's `run`, called the way a hand-written service would: no contract checks, no timer, no journal. */
// biome-ignore lint/suspicious/noExplicitAny: the floor reads tool outputs untyped, as a hand-written loop would
function runTool(tools: Readonly<Record<string, AnyTool>>, name: string, args: unknown, signal: AbortSignal): Promise<any> {
  return Promise.resolve(tools[name]!.run(args as never, { signal, idempotencyKey: name, log: noLog }));
}

/**
 * (a) The floor: the same steps as one async function — the same model answers and the same tool functions, in the
 * order the machine takes them for this message.
 */
export async function handWritten(tools: Readonly<Record<string, AnyTool>>): Promise<string> {
  const signal = new AbortController().signal;
  const { label } = benchModel.classify({
    kind: 'classify',
    text: BENCH_MESSAGE,
    labels: ['refund', 'order_query', 'other'],
    scripted: { keywords: { refund: ['refund', 'money back', 'return'], order_query: ['order', 'where', 'status', 'track', 'parcel'] } },
  });
  if (label !== 'order_query') throw new Error(`unexpected label ${label}`);
  const { orderId } = benchModel.extract({
    kind: 'extract',
    text: BENCH_MESSAGE,
    fields: { orderId: { type: 'string', optional: true } },
    scripted: { patterns: { orderId: '\\b([A-Z][0-9]{4})\\b' } },
  }) as { orderId: string };
  const customer = await runTool(tools, 'resolve_user', { user_id: 'guest' }, signal);
  const order = await runTool(tools, 'query_order', { order_id: orderId, customer_id: customer.id }, signal);
  const shipment =
    order.status === 'shipped'
      ? await runTool(tools, 'trace_shipment', { tracking_number: order.tracking_number ?? '' }, signal)
      : undefined;
  return benchModel.generate({
    kind: 'generate',
    prompt: '',
    scripted: { reply: `Order ${orderId} is ${order.status}. ${shipment?.location} ${shipment?.eta}` },
  }).text;
}

const plainMachines = new WeakMap<AnyMachineDefinition, AnyStateMachine>();

/**
 * The generated machine with every invoked actor replaced by a plain XState `fromPromise` that calls the tool's
 * `run` or the model directly: the machine a team would write with XState alone, making the same calls.
 */
export function plainMachine(definition: AnyMachineDefinition): AnyStateMachine {
  let machine = plainMachines.get(definition);
  if (machine) return machine;
  const actors: Record<string, AnyActorLogic> = {};
  for (const name of Object.keys(definition.tools)) {
    actors[`tool.${name}`] = fromPromise<unknown, { args: unknown }>(({ input, signal }) =>
      runTool(definition.tools, name, input.args, signal),
    );
  }
  actors['llm.classify'] = fromPromise<unknown, LlmRequest & { kind: 'classify' }>(async ({ input }) => benchModel.classify(input));
  actors['llm.extract'] = fromPromise<unknown, LlmRequest & { kind: 'extract' }>(async ({ input }) => benchModel.extract(input));
  actors['llm.generate'] = fromPromise<unknown, LlmRequest & { kind: 'generate' }>(async ({ input }) => benchModel.generate(input));
  machine = (definition.machine as AnyStateMachine).provide({ actors } as never);
  plainMachines.set(definition, machine);
  return machine;
}

/**
 * A bare XState session of `plainMachine`: an actor started and, with a `message`, sent it and back in `idle` with
 * no child actor left; resolves with the actor, still running, waiting for its next event.
 */
export function startBareXState(definition: AnyMachineDefinition, message?: string): Promise<AnyActorRef> {
  const machine = plainMachine(definition);
  const actor: AnyActorRef = createActor(machine);
  if (message === undefined) {
    actor.start();
    return Promise.resolve(actor);
  }
  return new Promise((resolve, reject) => {
    let sent = false;
    const subscription = actor.subscribe({
      next(snapshot: AnyMachineSnapshot) {
        if (sent && Object.keys(snapshot.children).length === 0 && snapshot.matches({ active: 'idle' })) {
          subscription.unsubscribe();
          if (typeof snapshot.context.reply !== 'string' || snapshot.context.error)
            reject(new Error(`bare XState session ended without a reply: ${JSON.stringify(snapshot.context).slice(0, 300)}`));
          else resolve(actor);
        }
      },
      error: reject,
    });
    actor.start();
    sent = true;
    actor.send({ type: 'USER_MESSAGE', text: message });
  });
}

/** (b) The baseline: `plainMachine` on bare XState, one actor per session, until it is back in `idle`. */
export async function bareXState(definition: AnyMachineDefinition): Promise<string> {
  const actor = await startBareXState(definition, BENCH_MESSAGE);
  actor.stop();
  return actor.getSnapshot().context.reply as string;
}

/** (c)-(e) The Flowing runtime: a session created and sent the message, with the log, checks, journal and store. */
export async function withRuntime(runtime: Runtime, definition: AnyMachineDefinition): Promise<string> {
  const session = await runtime.createSession(definition);
  const result = await session.send({ type: 'USER_MESSAGE', text: BENCH_MESSAGE });
  if (!result.applied || result.status !== 'waiting')
    throw new Error(`runtime session did not settle: ${JSON.stringify(result).slice(0, 300)}`);
  return 'ok';
}
