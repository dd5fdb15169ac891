import type { SessionStore } from '../store/types.ts';
import { receivedMessageIds, type ChannelMessage } from './deliver.ts';

/** How far back (by the sender's last update) the start-up scan looks for messages a crash kept from their receiver. */
export const CHANNEL_RECOVERY_WINDOW_MS = 24 * 60 * 60 * 1_000;

/** A stored message whose receiver's log does not have it, with the session it goes to. */
export interface UndeliveredMessage extends ChannelMessage {
  to: string;
}

/**
 * The messages that left no trace at their receiver: `channel.sent` events of sessions updated within `windowMs`
 * whose receiving session never logged `channel.received` for them. In-process delivery runs after the commit that
 * stores a message; a process that dies in between leaves exactly these (and a refusal by the receiver, which is
 * delivered again and refused again). Oldest sender first, each sender's messages in log order.
 */
export async function undeliveredMessages(
  store: SessionStore,
  now: number,
  windowMs = CHANNEL_RECOVERY_WINDOW_MS,
): Promise<UndeliveredMessage[]> {
  const sent: UndeliveredMessage[] = [];
  let cursor: string | undefined;
  const senders: string[] = [];
  do {
    const page = await store.listSessions({ limit: 500, ...(cursor ? { cursor } : {}) });
    for (const summary of page.sessions) if (summary.updatedAt >= now - windowMs) senders.push(summary.sessionId);
    cursor = page.nextCursor;
  } while (cursor);
  for (const sessionId of senders.reverse()) {
    for (const event of await store.readEvents(sessionId)) {
      if (event.type !== 'channel.sent') continue;
      const data = event.data as Omit<UndeliveredMessage, 'from'>;
      if (typeof data.to === 'string') sent.push({ ...data, from: sessionId });
    }
  }
  const received = new Map<string, Set<string>>();
  const missing: UndeliveredMessage[] = [];
  for (const message of sent) {
    let ids = received.get(message.to);
    if (!ids) received.set(message.to, (ids = await receivedMessageIds(store, message.to)));
    if (!ids.has(message.messageId)) missing.push(message);
  }
  return missing;
}
