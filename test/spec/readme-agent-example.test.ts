import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateSpec, type FlowSpec } from '@flowing/spec';
import { REPO_DIR } from '../helpers/project.ts';

/** The README block under `<!-- doc-test: agent-example -->`: one state of order-support, as JSON members. */
function agentExample(): Record<string, { invoke: { llm: string; tools?: string[] } }> {
  const lines = readFileSync(join(REPO_DIR, 'README.md'), 'utf8').split('\n');
  const marker = lines.indexOf('<!-- doc-test: agent-example -->');
  expect(marker, 'the README has the agent example').toBeGreaterThan(0);
  const end = lines.indexOf('```', marker + 2);
  return JSON.parse(`{${lines.slice(marker + 2, end).join('\n')}}`);
}

describe("the README's example of the agent call kind", () => {
  it('is a valid state of order-support that calls only tools the project has', () => {
    const example = agentExample();
    const [name, state] = Object.entries(example)[0]!;
    expect(state.invoke.llm).toBe('agent');
    for (const tool of state.invoke.tools ?? []) expect(existsSync(join(REPO_DIR, 'tools', `${tool}.ts`)), tool).toBe(true);
    const spec = JSON.parse(readFileSync(join(REPO_DIR, 'machines/order-support/order-support.flow.json'), 'utf8')) as FlowSpec & {
      states: { active: { states: Record<string, unknown> } };
    };
    spec.states.active.states[name] = state;
    const errors = validateSpec(spec).problems.filter((p) => p.severity === 'error');
    expect(errors).toEqual([]);
  });
});
