import type { RuntimeEvent } from '@flowing/protocol';

/** A streamed model message: the text assembled from its deltas, complete once `message.complete` arrived. */
export interface AssembledMessage {
  callId: string;
  text: string;
  complete: boolean;
  /** Seq of the first and latest event of the message. */
  firstSeq: number;
  lastSeq: number;
}

/** The streamed messages up to `events[index]`, in the order they started; `message.complete` carries the final text. */
export function assembleMessages(events: readonly RuntimeEvent[], index = events.length - 1): AssembledMessage[] {
  const byCall = new Map<string, AssembledMessage>();
  const last = Math.min(index, events.length - 1);
  for (let i = 0; i <= last; i++) {
    const event = events[i]!;
    if (event.type !== 'message.delta' && event.type !== 'message.complete') continue;
    const callId = String(event.data.callId ?? '');
    const text = typeof event.data.text === 'string' ? event.data.text : '';
    const message = byCall.get(callId) ?? { callId, text: '', complete: false, firstSeq: event.seq, lastSeq: event.seq };
    if (event.type === 'message.delta') message.text += text;
    else {
      message.text = text;
      message.complete = true;
    }
    message.lastSeq = event.seq;
    byCall.set(callId, message);
  }
  return [...byCall.values()];
}
