import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCaseFile, testCase, type CaseFile } from '@flowing/runtime/testing';
import type { AnyMachineDefinition } from '@flowing/runtime';
import { incidentTriage } from '../../machines/incident-triage/incident-triage.machine.ts';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { REPO_DIR } from '../helpers/project.ts';

async function casesOf(machine: AnyMachineDefinition): Promise<CaseFile[]> {
  const dir = join(REPO_DIR, 'machines', machine.id, 'cases');
  return Promise.all(
    readdirSync(dir)
      .filter((n) => n.endsWith('.case.jsonl'))
      .sort()
      .map((n) => readCaseFile(join(dir, n))),
  );
}

describe('replay figures', () => {
  it('replays 100 cases of the examples in well under a minute, every one passing; model calls per case are counted', async () => {
    const all = [
      ...(await casesOf(orderSupport as never)).map((file) => ({ machine: orderSupport as never as AnyMachineDefinition, file })),
      ...(await casesOf(incidentTriage as never)).map((file) => ({ machine: incidentTriage as never as AnyMachineDefinition, file })),
    ];
    expect(all.length).toBeGreaterThanOrEqual(7);
    const modelCalls: Record<string, number> = {};
    const started = performance.now();
    for (let i = 0; i < 100; i++) {
      const { machine, file } = all[i % all.length]!;
      const result = await testCase(machine, file);
      expect(result.ok, file.header.name).toBe(true);
      modelCalls[`${machine.id}/${file.header.name}`] = result.observation.modelCalls;
    }
    const elapsed = performance.now() - started;
    console.log(
      `[figures] 100 case replays: ${Math.round(elapsed)} ms (${(elapsed / 100).toFixed(1)} ms per case); model calls per case (scripted): ${JSON.stringify(modelCalls)}`,
    );
    expect(elapsed).toBeLessThan(60_000);
  }, 120_000);
});
