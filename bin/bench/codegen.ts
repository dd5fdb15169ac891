/**
 * Codegen timing: generate + type-check the examples and a generated 200-state machine, cold (a fresh process)
 * and warm (the same ts-morph Project after other machines). Run with `npm run bench:codegen`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCodegen } from '@flowing/codegen';

const root = process.cwd();
const BIG = '.flowing/bench/big-machine/big-machine.flow.json';

function bigSpec(size: number) {
  const states: Record<string, unknown> = {};
  for (let i = 0; i < size; i++) {
    const next = i + 1 < size ? `s${i + 1}` : 'done';
    if (i % 10 === 5) {
      states[`s${i}`] = {
        invoke: { tool: 'fetch_metrics', input: { service: 'context.service' }, onDone: { target: next, assign: { p99: 'output.p99Ms' } }, onError: 'done' },
      };
    } else if (i % 10 === 9) {
      states[`s${i}`] = {
        invoke: { llm: 'generate', prompt: 'Step {{ context.count }} of {{ context.service }}', onDone: { target: next, assign: { note: 'output.text' } }, onError: 'done' },
      };
    } else {
      states[`s${i}`] = {
        on: {
          NEXT: [
            { target: next, guard: `context.count >= ${i % 7} && event.weight > 0`, assign: { count: 'context.count + event.weight' } },
            { target: `s${(i * 7) % size}`, assign: { flag: '!context.flag' } },
          ],
          RESET: { target: 's0', assign: { count: '0' } },
        },
        after: { '60000': 'done' },
      };
    }
  }
  states.done = { type: 'final' };
  return {
    specVersion: 1, id: 'big-machine',
    context: {
      count: { type: 'number', default: 0 }, flag: { type: 'boolean', default: false }, service: { type: 'string', default: 'api' },
      p99: { type: 'number', optional: true }, note: { type: 'string', optional: true },
    },
    events: { NEXT: { weight: { type: 'number' } }, RESET: {} },
    initial: 's0', states,
  };
}

function coldRun(spec: string): number {
  const started = performance.now();
  execFileSync(process.execPath, ['bin/flowing.js', 'codegen', spec], { cwd: root, stdio: 'ignore' });
  return performance.now() - started;
}

mkdirSync(join(root, '.flowing/bench/big-machine'), { recursive: true });
writeFileSync(join(root, BIG), JSON.stringify(bigSpec(200), null, 2));

const examples = ['machines/order-support/order-support.flow.json', 'machines/incident-triage/incident-triage.flow.json'];
const rows: Array<[string, string]> = [];
for (const spec of [...examples, BIG]) rows.push([`cold process, ${spec.split('/').pop()}`, `${Math.round(coldRun(spec))} ms`]);

const codegen = createCodegen({ rootDir: root });
const first = await codegen.generate(examples[0]!, { write: false });
rows.push(['in-process first check (order-support)', `${first.timings.typeCheck} ms type-check, ${first.timings.total} ms total`]);
for (const spec of [examples[1]!, examples[0]!, BIG, BIG, examples[0]!]) {
  const result = await codegen.generate(spec, { write: false });
  if (!result.ok) throw new Error(`${spec}: ${JSON.stringify(result.problems.slice(0, 3))}`);
  rows.push([`warm, ${spec.split('/').pop()}`, `${result.timings.typeCheck} ms type-check, ${result.timings.total} ms total`]);
}
for (const [what, figure] of rows) console.log(`${what.padEnd(52)} ${figure}`);
