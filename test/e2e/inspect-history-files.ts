import { createMemoryStore, createRuntime, type Runtime } from '@flowing/runtime';
import { startServer } from '@flowing/runtime/server';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

/** GET /sessions/:id/export of a runtime server at `baseUrl`, as text. */
export async function exportOverHttp(baseUrl: string, sessionId: string): Promise<string> {
  const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/sessions/${encodeURIComponent(sessionId)}/export`);
  if (!response.ok) throw new Error(`export of ${sessionId} answered ${response.status}: ${await response.text()}`);
  return response.text();
}

/**
 * A real order-support session of at least `minEvents` events (order questions, refused APPROVEs, a refund approved
 * and paid), run on a memory runtime with the scripted model and exported through the runtime's HTTP route.
 */
export async function recordLongSession(minEvents: number): Promise<{ text: string; events: number; runtime: Runtime }> {
  const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), limits: { maxSteps: 100_000 } });
  const session = await runtime.createSession(orderSupport);
  let events = 0;
  for (let round = 0; events < minEvents; round++) {
    if (round % 10 === 3) await session.send({ type: 'APPROVE' }); // refused while idle: a transition.rejected to jump to
    if (round % 25 === 7) {
      await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
      await session.send({ type: 'APPROVE' });
    } else {
      await session.send({ type: 'USER_MESSAGE', text: round % 5 === 4 ? 'where is order Z9999' : 'where is my order A1001' });
    }
    events = (await session.snapshot()).seq;
  }
  const server = await startServer(runtime, { port: 0, host: '127.0.0.1', rateLimit: { client: false, session: false }, log: () => {} });
  try {
    return { text: await exportOverHttp(server.url, session.id), events, runtime };
  } finally {
    await server.close();
  }
}

/** The same export with its header's spec hash replaced: a session recorded from another version of the machine. */
export function withSpecHash(text: string, specHash: string): string {
  const end = text.indexOf('\n');
  const header = JSON.parse(text.slice(0, end)) as Record<string, unknown>;
  return `${JSON.stringify({ ...header, specHash })}${text.slice(end)}`;
}
