import type { Clock } from '../clock.ts';
import type { KeyedQueue } from '../session/keyed-queue.ts';
import type { Runtime, RuntimeChannels } from '../session/types.ts';
import type { SessionStore } from '../store/types.ts';
import { consumeChannels } from './consume.ts';
import { deliverMessage, warnUndelivered } from './deliver.ts';
import { undeliveredMessages } from './recover.ts';
import type { ChannelRouter } from './router.ts';

export interface ChannelStartParts {
  /** The runtime, once made (read when the work starts, after createRuntime returned). */
  runtime(): Runtime;
  router: ChannelRouter;
  store: SessionStore;
  deliveries: KeyedQueue;
  clock: Clock;
}

/**
 * Starts what receives this runtime's channel messages. A store that carries messages between processes (Redis) is
 * consumed: each listening machine's group of its channel streams. With any other store, delivery is in-process after
 * each commit, and what a crash kept from its receiver (stored, not delivered) is found in the logs and delivered
 * once at start. A runtime whose machines listen to nothing does neither.
 */
export function startChannels(parts: ChannelStartParts): RuntimeChannels {
  const { router, store } = parts;
  if (router.routes.length === 0) return { recovered: Promise.resolve(0), stop: async () => {} };
  if (store.channels) {
    const feed = store.channels;
    // After createRuntime returned: consumers deliver through the runtime.
    const consumers = Promise.resolve().then(() =>
      consumeChannels({ runtime: parts.runtime(), router, feed, deliveries: parts.deliveries }),
    );
    return {
      recovered: Promise.resolve(0),
      stop: async () => {
        await Promise.all((await consumers).map((consumer) => consumer.stop()));
      },
    };
  }
  let stopped = false;
  const recovered = Promise.resolve()
    .then(() => undeliveredMessages(store, parts.clock.now()))
    .then(async (messages) => {
      let applied = 0;
      await Promise.all(
        messages.map((message) =>
          parts.deliveries.run(message.to, async () => {
            if (stopped) return;
            const result = await deliverMessage(parts.runtime(), router, message);
            if (result.applied && !result.duplicate) applied++;
            else if (!result.applied) warnUndelivered(message, `${result.code}: ${result.message}`);
          }),
        ),
      );
      return applied;
    })
    .catch((error: unknown) => {
      process.emitWarning(`channel messages left undelivered by a crash could not be looked for: ${(error as Error).message}`, {
        code: 'CHANNEL_RECOVERY_FAILED',
      });
      return 0;
    });
  return {
    recovered,
    stop: async () => {
      stopped = true;
      await recovered;
    },
  };
}
