import type { Runtime, SendResult } from '../session/types.ts';
import type { ChannelRouter } from './router.ts';

/** A message as its sender logged it (`channel.sent`). */
export interface ChannelMessage {
  messageId: string;
  channel: string;
  key: string;
  data: Record<string, unknown>;
  /** The sending session. */
  from: string;
}

/**
 * Delivers a message at least once and applies it at most once: the receiving session (created for a new key) gets
 * it as an event under the message's id, so a message delivered again is answered as a duplicate, not applied.
 */
export async function deliverMessage(runtime: Runtime, router: ChannelRouter, message: ChannelMessage): Promise<SendResult> {
  const target = router.target(message.channel, message.key);
  if (!target) {
    return { applied: false, code: 'CHANNEL_UNROUTED', message: `no machine of this runtime listens to channel '${message.channel}'` };
  }
  const session = runtime.session(target.sessionId);
  const exists = await runtime.store.load(target.sessionId);
  if (!exists) {
    try {
      await runtime.createSession(target.machine, { [target.keyField]: message.key }, { sessionId: target.sessionId });
    } catch (error) {
      // Another delivery (or process) created it first: deliver to that one. Anything else is this delivery's failure.
      if (!(await runtime.store.load(target.sessionId))) throw error;
    }
  }
  return session.send(
    { type: target.event, ...message.data },
    { eventId: message.messageId, via: { channel: message.channel, from: message.from, messageId: message.messageId } },
  );
}
