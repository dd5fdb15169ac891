import type { Redis } from 'ioredis';
import type { RuntimeEvent } from '../../events.ts';
import type { CarriedMessage, ChannelConsumer, ChannelFeed, ChannelHandler } from '../types.ts';

/** Messages one stream keeps at most (approximately): older ones are trimmed when new ones are appended. */
export const DEFAULT_CHANNEL_STREAM_MAX_LEN = 100_000;

/** Entries one read or claim takes at a time. */
const BATCH = 100;
/**
 * Messages one consumer has in hand at most: reading goes on while some are delivered (a receiving session busy with a
 * long call holds up its own messages only), and stops at this bound until some are done.
 */
const MAX_IN_HAND = 500;

/** The stream of a channel's (or a listen pattern's) first name segment: `billing.need_order` -> `<prefix>channel:billing`. */
export function channelStreamKey(prefix: string, channel: string): string {
  return `${prefix}channel:${channel.split('.', 1)[0]}`;
}

/** The channel messages a commit's events send, as the outbox carries them. */
export function outgoingMessages(sessionId: string, events: readonly RuntimeEvent[]): CarriedMessage[] {
  const messages: CarriedMessage[] = [];
  for (const event of events) {
    if (event.type !== 'channel.sent') continue;
    const data = event.data as Omit<CarriedMessage, 'from' | 'at'>;
    messages.push({ ...data, from: sessionId, at: event.at });
  }
  return messages;
}

export interface RedisChannelFeedOptions {
  /** The store's connection: acknowledgements and claims go through it; each consumer duplicates it for its blocking reads. */
  redis: Redis;
  prefix: string;
  claimIdleMs: number;
  /** Longest XREADGROUP BLOCK (ms); stop disconnects the read at once anyway. */
  blockMs?: number;
  /** A message could not be read back (trimmed before it was handled, or not a message): said, never dropped silently. */
  warn?(text: string): void;
}

/**
 * Channel streams read in consumer groups (XREADGROUP, XACK, XAUTOCLAIM; never Pub/Sub). A new group starts at the
 * beginning of the stream, so messages sent before any receiver ran are delivered when the first one starts.
 */
export class RedisChannelFeed implements ChannelFeed {
  readonly claimIdleMs: number;
  private readonly consumers = new Set<ChannelConsumer>();

  constructor(private readonly options: RedisChannelFeedOptions) {
    this.claimIdleMs = options.claimIdleMs;
  }

  consume(options: { group: string; consumer: string; segments: readonly string[]; handle: ChannelHandler }): ChannelConsumer {
    const consumer = new GroupConsumer(this.options, options);
    const handle: ChannelConsumer = {
      stop: async () => {
        this.consumers.delete(handle);
        await consumer.stop();
      },
    };
    this.consumers.add(handle);
    return handle;
  }

  /** Stops every consumer (the store is closing). */
  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
  }
}

type Entry = [id: string, fields: string[]];

/** One consumer of one group: a blocking read of new messages, and a periodic claim of those left pending too long. */
class GroupConsumer {
  private readonly streams: string[];
  private readonly connection: Redis;
  private stopped = false;
  /** Pauses in progress, ended at once by stop. */
  private readonly sleepers = new Set<() => void>();
  private readonly loops: Promise<void>;
  /** The messages being handled here (`<stream> <entry id>`), each with the end of its handling. */
  private readonly inHand = new Map<string, Promise<void>>();

  constructor(
    private readonly feed: RedisChannelFeedOptions,
    private readonly options: { group: string; consumer: string; segments: readonly string[]; handle: ChannelHandler },
  ) {
    this.streams = [...new Set(options.segments.map((segment) => channelStreamKey(feed.prefix, segment)))];
    this.connection = feed.redis.duplicate();
    this.connection.on('error', () => {}); // a failed read is retried by the loop
    this.loops = this.groups().then(() => Promise.all([this.readLoop(), this.claimLoop()]).then(() => {}));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    this.connection.disconnect();
    await this.loops;
    await Promise.all(this.inHand.values());
  }

  private async groups(): Promise<void> {
    for (const stream of this.streams) {
      while (!this.stopped) {
        try {
          await this.feed.redis.xgroup('CREATE', stream, this.options.group, '0', 'MKSTREAM');
          break;
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('BUSYGROUP')) break;
          await this.pause(250);
        }
      }
    }
  }

  private async readLoop(): Promise<void> {
    const { group, consumer } = this.options;
    while (!this.stopped) {
      try {
        const reply = (await this.connection.xreadgroup(
          'GROUP',
          group,
          consumer,
          'COUNT',
          BATCH,
          'BLOCK',
          this.feed.blockMs ?? 2_000,
          'STREAMS',
          ...this.streams,
          ...this.streams.map(() => '>'),
        )) as Array<[string, Entry[]]> | null;
        for (const [stream, entries] of reply ?? []) await this.dispatch(stream, entries, false);
      } catch (error) {
        if (this.stopped) return;
        // The stream or group was deleted (FLUSHALL, a new Redis): make them again; else the connection is back soon.
        if (error instanceof Error && error.message.startsWith('NOGROUP')) await this.groups();
        else await this.pause(250);
      }
    }
  }

  /** Claims messages pending longer than claimIdleMs with any consumer of the group (a dead one, or this one's failures). */
  private async claimLoop(): Promise<void> {
    const every = Math.max(50, Math.floor(this.feed.claimIdleMs / 2));
    while (!this.stopped) {
      await this.pause(every);
      for (const stream of this.streams) {
        let cursor = '0-0';
        try {
          do {
            const [next, entries, deleted] = (await this.feed.redis.xautoclaim(
              stream,
              this.options.group,
              this.options.consumer,
              this.feed.claimIdleMs,
              cursor,
              'COUNT',
              BATCH,
            )) as [string, Array<Entry | null>, string[]?];
            if (deleted && deleted.length > 0) {
              this.feed.warn?.(
                `channel messages ${deleted.join(', ')} of ${stream} were trimmed before group '${this.options.group}' handled them`,
              );
            }
            await this.dispatch(
              stream,
              entries.filter((entry): entry is Entry => entry !== null),
              true,
            );
            cursor = next;
          } while (cursor !== '0-0' && !this.stopped);
        } catch {
          // Redis unreachable or the group gone: the next pass tries again (the read loop makes the group again).
        }
      }
    }
  }

  /**
   * Hands each message to the handler without waiting for the one before (the handler orders messages of one receiver
   * itself), at most MAX_IN_HAND at a time, and acknowledges each once handled. A message claimed while this consumer
   * still has it in hand (its handling is slow) is left to that handling.
   */
  private async dispatch(stream: string, entries: readonly Entry[], redelivered: boolean): Promise<void> {
    for (const [id, fields] of entries) {
      const key = `${stream} ${id}`;
      if (this.inHand.has(key)) continue;
      while (this.inHand.size >= MAX_IN_HAND) await Promise.race(this.inHand.values());
      const handling = this.handleOne(stream, id, fields, redelivered).finally(() => this.inHand.delete(key));
      this.inHand.set(key, handling);
    }
  }

  private async handleOne(stream: string, id: string, fields: readonly string[], redelivered: boolean): Promise<void> {
    const message = decodeMessage(fields);
    if (!message) this.feed.warn?.(`entry ${id} of ${stream} is not a channel message; acknowledged and skipped`);
    const handled = message ? await this.options.handle({ message, redelivered }).catch(() => false) : true;
    // An acknowledgement that fails leaves the message pending: it is claimed and handled again, then dropped as a repeat.
    if (handled) await this.feed.redis.xack(stream, this.options.group, id).catch(() => {});
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }
}

function decodeMessage(fields: readonly string[]): CarriedMessage | undefined {
  const index = fields.indexOf('m');
  if (index < 0 || index % 2 !== 0) return undefined;
  try {
    const message = JSON.parse(fields[index + 1]!) as CarriedMessage;
    if (typeof message?.messageId !== 'string' || typeof message.channel !== 'string' || typeof message.key !== 'string') return undefined;
    return message;
  } catch {
    return undefined;
  }
}
