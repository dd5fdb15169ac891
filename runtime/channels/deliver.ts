import { toFlowError } from '../errors.ts';
import type { Runtime, SendResult } from '../session/types.ts';
import type { SessionStore } from '../store/types.ts';
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
 * Refusals that say nothing about the message, only about the moment (the receiving session is stepped elsewhere,
 * the store or the runtime is busy): the message is delivered again later instead of being given up.
 */
const TRANSIENT = new Set(['BUSY', 'RUNTIME_SATURATED', 'SESSION_LEASED', 'STORE_UNAVAILABLE', 'STORE_CONFLICT', 'STORE_FENCED']);

/** True when a refusal of a message is only for now (see TRANSIENT). */
export function refusedForNow(result: SendResult): boolean {
  return !result.applied && TRANSIENT.has(result.code);
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
  const send = () =>
    session.send(
      { type: target.event, ...message.data },
      { eventId: message.messageId, via: { channel: message.channel, from: message.from, messageId: message.messageId } },
    );
  // The session of a key exists but for the first message: sent at once, created only when it is not found.
  try {
    return await send();
  } catch (error) {
    if (toFlowError(error).code !== 'SESSION_NOT_FOUND') throw error;
  }
  try {
    await runtime.createSession(target.machine, { [target.keyField]: message.key }, { sessionId: target.sessionId });
  } catch (error) {
    // Another delivery (or process) created it first: deliver to that one. Anything else is this delivery's failure.
    if (!(await runtime.store.load(target.sessionId))) throw error;
  }
  return send();
}

/**
 * The ids of the channel messages a session's log says it applied (`channel.received`). The log, not the session's
 * short memory of event ids, decides whether a message delivered again long after its first delivery was applied.
 */
export async function receivedMessageIds(store: SessionStore, sessionId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const event of await store.readEvents(sessionId)) {
    if (event.type === 'channel.received') ids.add((event.data as { messageId: string }).messageId);
  }
  return ids;
}

/**
 * A message its receiver refused (the receiver's log has the refusal) or that could not reach it (no session could be
 * made for its key): said on stderr with the message id, so it is never dropped silently.
 */
export function warnUndelivered(message: ChannelMessage, reason: string): void {
  process.emitWarning(`channel message ${message.messageId} on '${message.channel}' from ${message.from} was not applied: ${reason}`, {
    code: 'CHANNEL_UNDELIVERED',
  });
}
