import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { validateSpec } from '../../spec/index.ts';
import { useCodegenProject } from '../helpers/project.ts';

const project = useCodegenProject('flowing-property-');

const EVENTS = ['PING', 'NOTE', 'STOP'] as const;
const GUARDS_FOR_EVENT: Record<(typeof EVENTS)[number], string[]> = {
  PING: ['context.count > 1', '!context.flag', 'context.count % 2 == 0 || context.flag'],
  NOTE: ["event.text == 'go'", "event.text in ['a', 'b'] && context.count < 5", "(context.label ?? '') != event.text"],
  STOP: ['context.count >= 0'],
};
const ASSIGNS_FOR_EVENT: Record<(typeof EVENTS)[number], Record<string, string>[]> = {
  PING: [{ count: 'context.count + 1' }, { flag: '!context.flag' }, {}],
  NOTE: [{ label: 'event.text' }, { count: 'context.count * 2', label: "'noted: ' + event.text" }, {}],
  STOP: [{}],
};

/** Random specs of 2–7 states with guarded, assigning transitions, delays, a compound state and model calls. */
const specArbitrary = fc
  .record({
    size: fc.integer({ min: 2, max: 7 }),
    edges: fc.array(
      fc.record({
        from: fc.nat(),
        to: fc.nat(),
        event: fc.constantFrom(...EVENTS),
        guard: fc.nat(),
        assign: fc.nat(),
        guarded: fc.boolean(),
      }),
      { minLength: 1, maxLength: 12 },
    ),
    delayed: fc.option(fc.record({ from: fc.nat(), to: fc.nat(), ms: fc.integer({ min: 1, max: 50 }) })),
    generate: fc.option(fc.record({ at: fc.nat(), to: fc.nat() })),
    compound: fc.boolean(),
  })
  .map(({ size, edges, delayed, generate, compound }) => {
    const names = Array.from({ length: size }, (_, i) => `s${i}`);
    const states: Record<string, any> = Object.fromEntries(names.map((n) => [n, {}]));
    states[names[size - 1]!] = { type: 'final' };
    for (const edge of edges) {
      const from = names[edge.from % (size - 1)]!;
      const to = names[edge.to % size]!;
      const transition: any = { target: to };
      if (edge.guarded) transition.guard = GUARDS_FOR_EVENT[edge.event][edge.guard % GUARDS_FOR_EVENT[edge.event].length];
      const assign = ASSIGNS_FOR_EVENT[edge.event][edge.assign % ASSIGNS_FOR_EVENT[edge.event].length]!;
      if (Object.keys(assign).length) transition.assign = assign;
      const on = (states[from].on ??= {});
      on[edge.event] = [...(Array.isArray(on[edge.event]) ? on[edge.event] : []), transition];
    }
    if (delayed) states[names[delayed.from % (size - 1)]!].after = { [String(delayed.ms)]: names[delayed.to % size] };
    if (generate) {
      const at = names[generate.at % (size - 1)]!;
      states[at].invoke = {
        llm: 'generate',
        prompt: 'Count is {{ context.count }}, label {{ context.label }}',
        onDone: { target: names[generate.to % size], assign: { label: 'output.text' } },
        onError: names[size - 1],
      };
    }
    if (compound) {
      const inner = names[0]!;
      states[inner] = {
        initial: 'inner_a',
        on: states[inner].on,
        states: { inner_a: { on: { PING: 'inner_b' } }, inner_b: { type: 'final' } },
        onDone: names[size - 1],
      };
    }
    return {
      specVersion: 1,
      id: 'random-machine',
      context: {
        count: { type: 'number', default: 0 },
        flag: { type: 'boolean', default: false },
        label: { type: 'string', optional: true },
      },
      events: { PING: {}, NOTE: { text: { type: 'string' } }, STOP: {} },
      initial: names[0],
      states,
    };
  });

const eventArbitrary = fc.oneof(
  fc.constant({ type: 'PING' }),
  fc.constantFrom('go', 'a', 'b', 'zz').map((text) => ({ type: 'NOTE', text })),
  fc.constant({ type: 'STOP' }),
);

describe('random valid specs (property)', () => {
  it('generate code that type-checks and runs under createActor without throwing on declared events', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(specArbitrary, fc.array(eventArbitrary, { maxLength: 15 }), async (raw, events) => {
        const validation = validateSpec(raw);
        fc.pre(validation.ok);
        const id = `random-${run++}`;
        const spec = { ...raw, id };
        await mkdir(join(project.dir, 'machines', id), { recursive: true });
        await writeFile(join(project.dir, 'machines', id, `${id}.flow.json`), JSON.stringify(spec, null, 2));
        const result = await project.codegen.generate(`machines/${id}/${id}.flow.json`);
        expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);

        const module = await import(pathToFileURL(join(project.dir, 'machines', id, `${id}.machine.ts`)).href);
        const definition = module[id.replace(/-([a-z0-9])/g, (_: string, c: string) => c.toUpperCase())];
        const actor = createActor(definition.machine, { input: {} });
        const errors: unknown[] = [];
        actor.subscribe({ error: (error) => errors.push(error) });
        actor.start();
        for (const event of events) actor.send(event as never);
        await new Promise((resolve) => setTimeout(resolve, 60));
        actor.stop();
        expect(errors).toEqual([]);
        expect(actor.getSnapshot().status).not.toBe('error');
      }),
      { numRuns: 8, endOnFailure: true },
    );
  }, 600_000);
});
