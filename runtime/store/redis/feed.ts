import type { Redis } from 'ioredis';
import type { RuntimeEvent } from '../../events.ts';
import { FeedFollowers } from '../feed.ts';
import type { StoreFeedListener } from '../types.ts';

export interface StreamFeedOptions {
  /** The store's connection; the feed duplicates it for its blocking reads and uses it to wake them. */
  redis: Redis;
  streamKey(sessionId: string): string;
  decode(sessionId: string, id: string, fields: unknown): RuntimeEvent;
  /** Longest XREAD BLOCK (ms); a change of followers wakes the read at once anyway. */
  blockMs?: number;
}

/**
 * Live events of followed sessions from their streams: `XREAD BLOCK` on a dedicated connection, always from the last
 * id each session was read to, never `$` and never Pub/Sub, so a reconnect or a slow reader loses nothing. One
 * blocking read serves every followed session; adding or removing a follower wakes it with `CLIENT UNBLOCK`.
 */
export class StreamFeed {
  private readonly followers = new FeedFollowers();
  private connection?: Redis;
  private connectionId?: number;
  private running = false;
  private blocked = false;
  private closed = false;

  constructor(private readonly options: StreamFeedOptions) {
    this.followers.onChange = () => this.wake();
  }

  follow(sessionId: string, afterSeq: number, listener: StoreFeedListener): () => void {
    const stop = this.followers.add(sessionId, afterSeq, listener);
    if (!this.running && !this.closed) void this.loop();
    return stop;
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    connection?.disconnect();
  }

  private wake() {
    if (!this.blocked || this.connectionId === undefined) return;
    // Best effort: without it the read ends at its BLOCK timeout and picks the change up then.
    this.options.redis.client('UNBLOCK', this.connectionId).catch(() => {});
  }

  private async loop() {
    this.running = true;
    try {
      while (!this.closed && this.followers.size > 0) {
        try {
          await this.readOnce();
        } catch {
          if (this.closed) return;
          // Connection lost or refused: ioredis reconnects; read again from the same ids after a pause.
          this.connectionId = undefined;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async readOnce() {
    const connection = (this.connection ??= this.openConnection());
    this.connectionId ??= Number(await connection.client('ID'));
    const cursors = this.followers.cursors();
    if (cursors.length === 0) return;
    const keys = cursors.map(([id]) => this.options.streamKey(id));
    const ids = cursors.map(([, after]) => `${after}-0`);
    this.blocked = true;
    let reply: unknown;
    try {
      reply = await connection.xread('COUNT', 1_000, 'BLOCK', this.options.blockMs ?? 5_000, 'STREAMS', ...keys, ...ids);
    } finally {
      this.blocked = false;
    }
    for (const [key, entries] of streamsOf(reply)) {
      const index = keys.indexOf(key);
      if (index < 0) continue;
      const sessionId = cursors[index]![0];
      try {
        this.followers.dispatch(
          sessionId,
          entries.map(([id, fields]) => this.options.decode(sessionId, id, fields)),
        );
      } catch {
        // A corrupt entry: readEvents reports it with its code to whoever reads the log; the feed skips this batch.
      }
    }
  }

  private openConnection(): Redis {
    // A blocking read waits up to its BLOCK time by design: the store's command timeout must not cut it short.
    const connection = this.options.redis.duplicate({ commandTimeout: undefined });
    connection.on('error', () => {}); // reported by the failing read; ioredis keeps reconnecting
    connection.on('ready', () => {
      this.connectionId = undefined;
    });
    return connection;
  }
}

/** XREAD's reply as `[key, entries]` pairs, whether the client maps it as RESP2 pairs or a RESP3 flat map. */
function streamsOf(reply: unknown): Array<[string, Array<[string, unknown]>]> {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  if (Array.isArray(reply[0])) return reply as Array<[string, Array<[string, unknown]>]>;
  const pairs: Array<[string, Array<[string, unknown]>]> = [];
  for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([String(reply[i]), reply[i + 1] as Array<[string, unknown]>]);
  return pairs;
}
