import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate, loadToolCatalog, type ToolCatalog } from '@flowing/codegen';
import { FlowSpecSchema, parseSpecText, type FlowSpec } from '@flowing/spec';
import { REPO_DIR } from '../helpers/project.ts';

/**
 * Issue "One session core", item 7: generated guards and actions are named after their meaning, so a reviewer's diff
 * shows what changed and nothing else.
 */
let tools: ToolCatalog;
let orderSupport: FlowSpec;

beforeAll(async () => {
  tools = await loadToolCatalog(REPO_DIR);
  orderSupport = parseSpecText(await readFile(join(REPO_DIR, 'machines/order-support/order-support.flow.json'), 'utf8'), { tools }).spec!;
});

const machineText = (spec: FlowSpec) => generate(spec, { tools })[0]!.text;

/** idle --GO--> one of three finals, by two guarded branches and a fallback; each branch prints on one line. */
function routing(branches: Array<Record<string, unknown>>, extra: Partial<FlowSpec> = {}): FlowSpec {
  return FlowSpecSchema.parse({
    specVersion: 1,
    id: 'routing',
    context: { n: { type: 'number', default: 0 }, note: { type: 'string', optional: true } },
    events: { GO: { n: { type: 'number' } } },
    initial: 'idle',
    states: { idle: { on: { GO: branches } }, big: { type: 'final' }, low: { type: 'final' }, small: { type: 'final' } },
    ...extra,
  });
}

const BIG = { guard: 'event.n > 10', target: 'big', assign: { note: "'big'" } };
const LOW = { guard: 'event.n < 0', target: 'low', assign: { note: "'low'" } };
const SMALL = { target: 'small', assign: { n: 'event.n' } };

/** The indices of the lines that differ between two texts of the same number of lines. */
function changedLines(a: string, b: string): number[] {
  const left = a.split('\n');
  const right = b.split('\n');
  expect(right.length).toBe(left.length);
  return left.flatMap((line, i) => (line === right[i] ? [] : [i]));
}

/** The `name: ` keys of one `setup()` block (`guards` or `actions`). */
function setupNames(text: string, block: 'guards' | 'actions'): string[] {
  const setup = text.slice(text.indexOf('setup({'), text.indexOf('}).createMachine('));
  const start = setup.indexOf(`  ${block}: {\n`);
  if (start < 0) return [];
  const body = setup.slice(start, setup.indexOf('\n  },', start));
  return [...body.matchAll(/^ {4}([A-Za-z_$][\w$]*):/gm)].map((m) => m[1]!);
}

describe('names of generated guards and actions', () => {
  it('swapping two branches of one transition changes at most 4 lines: the two branch lines and the spec hash', () => {
    const before = machineText(routing([BIG, LOW, SMALL]));
    const after = machineText(routing([LOW, BIG, SMALL]));
    const changed = changedLines(before, after);
    expect(changed.length).toBeLessThanOrEqual(4);
    const [a, b] = [before.split('\n'), after.split('\n')];
    const branches = changed.filter((i) => !a[i]!.includes('sha256') && !a[i]!.includes('specHash'));
    expect(branches).toHaveLength(2);
    expect([a[branches[0]!], a[branches[1]!]]).toEqual([b[branches[1]!], b[branches[0]!]]);
    expect(a[branches[0]!]).toContain('target: "big"');
  });

  it('keeps setup() byte-identical when two multi-line branches of order-support swap, and only moves lines', () => {
    const swapped = structuredClone(orderSupport) as any;
    const onDone = swapped.states.active.states.fetch_order.invoke.onDone;
    [onDone[0], onDone[1]] = [onDone[1], onDone[0]];
    const before = machineText(orderSupport);
    const after = machineText(swapped);
    const setupOf = (text: string) => text.slice(text.indexOf('setup({'), text.indexOf('}).createMachine('));
    expect(setupOf(after)).toBe(setupOf(before));
    const unhashed = (text: string) =>
      text
        .split('\n')
        .filter((line) => !/sha256|specHash/.test(line))
        .sort();
    expect(unhashed(after)).toEqual(unhashed(before));
    expect(after).not.toBe(before);
  });

  it('names guards by state, event and target, and assigns by the fields they set, with no position in any name', () => {
    const text = machineText(orderSupport);
    expect(setupNames(text, 'guards')).toEqual([
      'classifyDoneToSmallTalk',
      'extractOrderIdDoneToAskOrderId',
      'fetchOrderDoneToAwaitApproval',
      'fetchOrderDoneToTraceShipment',
      'fetchOrderErrorToOrderNotFound',
    ]);
    const actions = setupNames(text, 'actions');
    expect(actions).toEqual(expect.arrayContaining(['setLastMessage', 'setError', 'setOrder', 'setRefundIdAndReply', 'setReply']));
    // Five assigns set `reply` alone: the one two places share keeps `setReply`, the others are named by their place.
    expect(actions).toEqual(
      expect.arrayContaining(['askOrderIdEntry', 'orderNotFoundEntry', 'awaitApprovalEntry', 'awaitApprovalRejectToIdle']),
    );
    for (const name of [...setupNames(text, 'guards'), ...actions]) expect(name).not.toMatch(/\d$/);
  });

  it('emits each distinct assign once and refers to it from every place that uses it', () => {
    const text = machineText(orderSupport);
    const setup = text.slice(text.indexOf('  actions: {'), text.indexOf('}).createMachine('));
    const config = text.slice(text.indexOf('}).createMachine('));
    const bodies = [...setup.matchAll(/^ {4}[\w$]+: (assign\([\s\S]*?\)),\n(?= {4}[\w$/]|\s*\},)/gm)].map((m) =>
      m[1]!.replace(/\s+/g, ' '),
    );
    expect(bodies).toHaveLength(13);
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(config.match(/type: "setError"/g)).toHaveLength(6);
    expect(config.match(/type: "setOrder"/g)).toHaveLength(3);
    expect(config.match(/type: "setLastMessage"/g)).toHaveLength(3);
  });

  it('resolves two guards that want one name by a hash of their code, the same names in either order', () => {
    const twice = [{ guard: 'event.n > 10', target: 'big' }, { guard: 'event.n > 100', target: 'big' }, SMALL];
    const names = (text: string) =>
      Object.fromEntries([...text.matchAll(/^ {4}(idleGoToBig_[0-9a-f]{4}): \(_, event: [^)]+\) => (.*),$/gm)].map((m) => [m[2]!, m[1]!]));
    const forward = names(machineText(routing(twice)));
    const backward = names(machineText(routing([twice[1]!, twice[0]!, SMALL])));
    expect(Object.keys(forward).sort()).toEqual(['event.n > 10', 'event.n > 100']);
    expect(new Set(Object.values(forward)).size).toBe(2);
    expect(backward).toEqual(forward);
  });

  it('never takes a name the spec declares for its own guard: the generated one gets a hash suffix', () => {
    const text = machineText(routing([BIG, SMALL], { guards: { idleGoToBig: {} } }));
    expect(setupNames(text, 'guards')[0]).toBe('idleGoToBig');
    expect(setupNames(text, 'guards')[1]).toMatch(/^idleGoToBig_[0-9a-f]{4}$/);
    expect(text).toContain(`guard: { type: "${setupNames(text, 'guards')[1]}", params: ({ event }) => event }`);
  });
});
