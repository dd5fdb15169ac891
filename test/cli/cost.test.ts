import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs } from '../helpers/cli.ts';
import { copyProject, editJsonFile } from '../helpers/project.ts';

function runCli(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('flowing cost and the budget in flowing validate', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject('flowing-cost-');
    await editJsonFile(join(project.dir, 'machines/order-support/order-support.flow.json'), (spec) => {
      spec.budget = { modelCalls: 6 };
    });
  });
  afterAll(() => project.remove());

  it('validate fails on a turn over the budget, naming the path and the call that crosses it; cost prints the table', async () => {
    const [validate, cost, json, unknown] = await Promise.all([
      runCli(project.dir, ['validate']),
      runCli(project.dir, ['cost', 'order-support']),
      runCli(project.dir, ['cost', '--json']),
      runCli(project.dir, ['cost', 'no-such-machine']),
    ]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(
      "machines/order-support/order-support.flow.json#/states/active/states/compose_reply/invoke SPEC_BUDGET_EXCEEDED the turn on USER_MESSAGE from 'idle' (to 'idle') (classify → extract_order_id → resolve_user → fetch_order → trace_shipment → compose_reply → idle) makes up to 7 model calls; the budget allows 6 per turn",
    );

    expect(cost.code).toBe(1);
    expect(cost.stdout).toMatch(/^order-support \(machines\/order-support\/order-support\.flow\.json\)\n {2}per turn: /);
    expect(cost.stdout).toMatch(/\n +7 +9 +unbounded {2}idle --USER_MESSAGE--> classify → extract_order_id → .* → idle\n/);
    expect(cost.stdout).toMatch(/\n +7 +9 +unbounded {2}maximum per turn\n/);
    expect(cost.stdout).toMatch(/\n +13 +15 +unbounded {2}maximum per path, each turn once\n/);
    expect(cost.stdout).toContain('  budget: modelCalls 6 per turn\n');

    const report = JSON.parse(json.stdout) as { machines: Array<{ machineId: string; maximum: unknown; problems: unknown[] }> };
    expect(report.machines.map((m) => m.machineId)).toEqual([
      'incident-triage',
      'order-support',
      'support-billing',
      'support-desk',
      'support-orders',
    ]);
    expect(report.machines[0]!.maximum).toEqual({
      turn: { modelCalls: 1, toolCalls: 7, tokens: null },
      session: { modelCalls: 2, toolCalls: 14, tokens: null },
    });
    expect(report.machines[1]!.problems).toHaveLength(1);

    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'flowing cost: no machine no-such-machine (machines: incident-triage, order-support, support-billing, support-desk, support-orders)',
    );
  });
});
