import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that forwards to `target` and, for each connection, may cut the response after a number of
 * bytes (`cutAfter(n)` for the n-th connection; undefined lets it through whole): the client sees a broken connection
 * mid-stream, maybe mid-event or before the headers.
 */
export async function startCuttingProxy(
  targetPort: number,
  cutAfter: (connection: number) => number | undefined,
): Promise<{ port: number; cuts: number[]; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const cuts: number[] = [];
  let connections = 0;
  const server: Server = createServer((client) => {
    const limit = cutAfter(connections++);
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => sockets.delete(client) && upstream.destroy());
    upstream.on('close', () => sockets.delete(upstream) && client.end());
    client.on('error', drop);
    upstream.on('error', drop);
    client.pipe(upstream);
    let forwarded = 0;
    upstream.on('data', (chunk: Buffer) => {
      if (limit === undefined) {
        client.write(chunk);
        return;
      }
      const room = limit - forwarded;
      if (chunk.length < room) {
        forwarded += chunk.length;
        client.write(chunk);
        return;
      }
      client.write(chunk.subarray(0, room));
      forwarded = limit;
      cuts.push(limit);
      // Reset, not a clean FIN: the client must not take the cut for the end of the response.
      client.resetAndDestroy();
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
