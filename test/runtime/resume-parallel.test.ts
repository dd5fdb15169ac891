import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, defineTool, type AnyTool } from '@flowing/runtime';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';

/** The incident tools made non-idempotent (a side-effect ledger counts runs), with a slow metrics fetch. */
function ledgerTools(delays: Record<string, number>) {
  const counts: Record<string, number> = {};
  const tools: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(incidentTriage.tools) as Array<[string, AnyTool]>) {
    counts[name] = 0;
    tools[name] = defineTool({
      ...tool,
      idempotent: false,
      run: async (input, context) => {
        counts[name]!++;
        await new Promise((resolve) => setTimeout(resolve, delays[name] ?? 0));
        return tool.run(input, context);
      },
    }) as AnyTool;
  }
  return { tools, counts };
}

describe('resume inside a parallel state', () => {
  it('finds a call started in one region after the other region moved the step counter on, and never runs it twice', async () => {
    const { store, dumps } = createRecordingStore();
    const original = ledgerTools({ fetch_logs: 5, fetch_metrics: 80 });
    const runtime = createRuntime({ machines: [incidentTriage], store, tools: original.tools });
    const session = await runtime.createSession(incidentTriage);
    await session.send({ type: 'ALERT', service: 'api', severity: 'warning' });
    expect((await session.snapshot()).status).toBe('waiting');

    let interrupted = 0;
    for (const [k, dump] of dumps.entries()) {
      const journal = [...(dump.journal.get(session.id)?.values() ?? [])];
      const metrics = journal.find((e) => e.name === 'fetch_metrics');
      const logs = journal.find((e) => e.name === 'fetch_logs');
      const resumed = ledgerTools({});
      const again = createRuntime({ machines: [incidentTriage], store: createMemoryStore({ data: dump }), tools: resumed.tools });
      await again.resume(session.id);
      const where = `crash after write ${k + 1} of ${dumps.length}`;
      const snapshot = await again.session(session.id).snapshot();
      // A non-idempotent call whose start was stored is never made again, whichever region moved on since.
      if (metrics) expect(resumed.counts.fetch_metrics, where).toBe(0);
      if (logs) expect(resumed.counts.fetch_logs, where).toBe(0);
      if (metrics && !metrics.completed && logs?.completed) {
        interrupted++;
        expect(snapshot.status, where).toBe('needs_attention');
        const events = await again.store.readEvents(session.id);
        expect(
          events.filter((e) => e.type === 'tool.unknown_outcome').map((e) => (e.data as { callId: string }).callId),
          where,
        ).toEqual([metrics.key]);
      }
    }
    // At least one write falls between "logs done" and "metrics done": the case the step counter used to miss.
    expect(interrupted).toBeGreaterThanOrEqual(1);
  });
});
