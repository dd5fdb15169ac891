import { createActor, type AnyActorRef } from 'xstate';
import { createScriptedProvider, type AnyMachineDefinition, type AnyTool, type Runtime } from '@flowing/runtime';

/** The message every benchmark session handles: classify, extract, 3 tools, generate. */
export const BENCH_MESSAGE = 'where is my order A1001';

const provider = createScriptedProvider();
const signal = new AbortController().signal;

/** (a) The same steps as plain async code: scripted model calls and the tools with their zod contracts. */
export async function handWritten(tools: Readonly<Record<string, AnyTool>>): Promise<string> {
  const call = async (name: string, args: unknown) => {
    const tool = tools[name]!;
    return tool.output.parse(await tool.run(tool.input.parse(args), { signal, idempotencyKey: name, log: () => {} })) as Record<string, any>;
  };
  const { output: { label } } = await provider.classify({ kind: 'classify', text: BENCH_MESSAGE, labels: ['order_query', 'refund', 'other'],
    scripted: { keywords: { refund: ['refund', 'money back', 'return'], order_query: ['order', 'where', 'status', 'track', 'parcel'] } } }, { signal });
  if (label === 'other') throw new Error('unexpected label');
  const { output: { orderId } } = await provider.extract({ kind: 'extract', text: BENCH_MESSAGE, fields: { orderId: { type: 'string', optional: true } },
    scripted: { patterns: { orderId: '\\b([A-Z][0-9]{4})\\b' } } }, { signal });
  const customer = await call('resolve_user', { user_id: 'guest' });
  const order = await call('query_order', { order_id: orderId, customer_id: customer.id });
  const shipment = order.status === 'shipped' ? await call('trace_shipment', { tracking_number: order.tracking_number ?? '' }) : undefined;
  const reply = await provider.generate({ kind: 'generate', prompt: '', scripted: { reply: `Order ${orderId} is ${order.status}. ${shipment?.location} ${shipment?.eta}` } }, { signal, onDelta: () => {} });
  return reply.output.text;
}

/** (b) The generated machine on bare XState: its default `fromTool` / `fromLlm` actors, no runtime. */
export function bareXState(definition: AnyMachineDefinition): Promise<string> {
  return new Promise((resolve, reject) => {
    const actor: AnyActorRef = createActor(definition.machine);
    let sent = false;
    actor.subscribe({
      next(snapshot: any) {
        if (sent && Object.keys(snapshot.children).length === 0 && snapshot.matches({ active: 'idle' })) {
          actor.stop();
          resolve(snapshot.context.reply);
        }
      },
      error: reject,
    });
    actor.start();
    sent = true;
    actor.send({ type: 'USER_MESSAGE', text: BENCH_MESSAGE });
  });
}

/** (c) The Flowing runtime: a session created and sent the message, with the log, checks and store. */
export async function withRuntime(runtime: Runtime, definition: AnyMachineDefinition): Promise<string> {
  const session = await runtime.createSession(definition);
  const result = await session.send({ type: 'USER_MESSAGE', text: BENCH_MESSAGE });
  if (!result.applied || result.status !== 'waiting') throw new Error(`runtime session did not settle: ${JSON.stringify(result).slice(0, 300)}`);
  return 'ok';
}
