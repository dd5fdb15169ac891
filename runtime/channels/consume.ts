import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { KeyedQueue } from '../session/keyed-queue.ts';
import type { Runtime } from '../session/types.ts';
import type { ChannelConsumer, ChannelDelivery, ChannelFeed } from '../store/types.ts';
import { deliverMessage, receivedMessageIds, refusedForNow, warnUndelivered } from './deliver.ts';
import type { ChannelRouter } from './router.ts';

/** What consuming the channel feed needs of the runtime. */
export interface ChannelConsumerParts {
  runtime: Runtime;
  router: ChannelRouter;
  feed: ChannelFeed;
  /** Orders the deliveries to one receiving session (the runtime's, shared with its other deliveries). */
  deliveries: KeyedQueue;
}

/**
 * Consumes the channel streams of every machine of the runtime that listens: one consumer group per machine (so every
 * process serving it shares its messages), one consumer per process. A message is acknowledged once its receiving
 * session applied it or refused it for good; one refused only for now, or whose delivery failed, stays pending and
 * is claimed again. A message handed out again is first looked up in the receiver's log: applied ones are dropped.
 */
export function consumeChannels(parts: ChannelConsumerParts): ChannelConsumer[] {
  const consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const byMachine = new Map<string, Set<string>>();
  for (const route of parts.router.routes) {
    const segments = byMachine.get(route.machine) ?? new Set<string>();
    segments.add(route.pattern.split('.', 1)[0]!);
    byMachine.set(route.machine, segments);
  }
  return [...byMachine].map(([machine, segments]) =>
    parts.feed.consume({
      group: machine,
      consumer,
      segments: [...segments],
      handle: (delivery) => handleMessage(parts, machine, delivery),
    }),
  );
}

async function handleMessage(parts: ChannelConsumerParts, machine: string, { message, redelivered }: ChannelDelivery): Promise<boolean> {
  const target = parts.router.target(message.channel, message.key);
  // Another machine's message on a stream this one shares (`billing.refund.*` and `billing.order.*`): not this group's.
  if (!target || target.machine !== machine || (message.machine !== undefined && message.machine !== machine)) return true;
  return parts.deliveries.run(target.sessionId, async () => {
    if (redelivered && (await receivedMessageIds(parts.runtime.store, target.sessionId)).has(message.messageId)) return true;
    const result = await deliverMessage(parts.runtime, parts.router, message);
    if (refusedForNow(result)) return false;
    if (!result.applied) warnUndelivered(message, `${result.code}: ${result.message}`);
    return true;
  });
}
