import { request, type IncomingMessage } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** What a paused SSE client read once it resumed: the events, and the bytes of the body. */
export interface PausedRead {
  events: EventSourceMessage[];
  bytes: number;
}

/**
 * An SSE request whose response stays paused (the client reads nothing, so the connection's buffers fill up and
 * the server's writes wait) until `resume` reads it to its end.
 */
export function pausedStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ response: IncomingMessage; resume(): Promise<PausedRead> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      response.pause();
      resolve({
        response,
        resume: () =>
          new Promise((done, fail) => {
            const events: EventSourceMessage[] = [];
            let bytes = 0;
            const parser = createParser({ onEvent: (event) => events.push(event) });
            response.setEncoding('utf8');
            response.on('data', (text: string) => {
              bytes += Buffer.byteLength(text);
              parser.feed(text);
            });
            response.on('end', () => done({ events, bytes }));
            response.on('error', fail);
            response.resume();
          }),
      });
    });
    req.on('error', reject);
    req.end();
  });
}
