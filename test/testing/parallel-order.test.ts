import { describe, expect, it } from 'vitest';
import { createRuntime, defineTool } from '@flowing/runtime';
import { caseFromLog, testCase } from '@flowing/runtime/testing';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';

describe('replaying parallel calls', () => {
  it('gives parallel calls their answers in the order the recording got them, so the other region finishing first still replays cleanly', async () => {
    // Recorded with a slow log service: metrics finish first, although logs were asked first.
    const slowLogs = defineTool({
      ...incidentTriage.tools.fetch_logs!,
      examples: [],
      errorExamples: [],
      async run(input: unknown, context) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return incidentTriage.tools.fetch_logs!.run(input as never, context);
      },
    });
    const runtime = createRuntime({ machines: [incidentTriage], tools: { fetch_logs: slowLogs } });
    const session = await runtime.createSession(incidentTriage);
    await session.send({ type: 'ALERT', service: 'checkout', severity: 'critical' });
    const file = caseFromLog(await session.events(), await session.snapshot(), { name: 'metrics-first' });
    expect(file.expect.steps).toContainEqual({ state: 'gathering.{logs.fetching_logs, metrics.metrics_ready}' });
    expect(file.calls.slice(0, 2).map((c) => c.name)).toEqual(['fetch_metrics', 'fetch_logs']);

    const result = await testCase(incidentTriage, file);
    expect(result.report).toEqual([]);
  });
});
