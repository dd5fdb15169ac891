import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate, loadToolCatalog, type ToolCatalog } from '@flowing/codegen';
import { parseSpecText } from '@flowing/spec';
import { REPO_DIR } from '../helpers/project.ts';

let tools: ToolCatalog;
const texts: Record<string, string> = {};

beforeAll(async () => {
  tools = await loadToolCatalog(REPO_DIR);
  for (const id of ['order-support', 'incident-triage']) {
    const parsed = parseSpecText(await readFile(join(REPO_DIR, `machines/${id}/${id}.flow.json`), 'utf8'), { tools });
    texts[id] = generate(parsed.spec!, { tools })[0]!.text;
  }
});

/** What a reviewer of the generated order-support module would otherwise flag (issue 7, item 5). */
describe('generated machine modules read as hand-written XState v5', () => {
  it('keeps order-support under 400 lines, every line under 120 characters (the hash banner aside)', () => {
    const lines = texts['order-support']!.split('\n');
    expect(lines.length).toBeLessThanOrEqual(400);
    for (const text of Object.values(texts)) {
      expect(
        text
          .split('\n')
          .slice(2)
          .filter((line) => line.length >= 120),
      ).toEqual([]);
    }
  });

  it('carries no copy of the spec and imports only xstate, the runtime and its own registry', () => {
    for (const text of Object.values(texts)) {
      expect(text).not.toMatch(/const spec\b|@flowing\/spec|specVersion/);
      const imports = [...text.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(
        imports.filter((s) => !['xstate', '@flowing/runtime'].includes(s!) && !/^\.\/[a-z0-9-]+\.(registry|impl)\.js$/.test(s!)),
      ).toEqual([]);
    }
  });

  it('names every guard and action in setup() and refers to them by name, with no inline functions in the config', () => {
    const text = texts['order-support']!;
    const config = text.slice(text.indexOf('.createMachine({'));
    const setup = text.slice(text.indexOf('setup({'), text.indexOf('.createMachine({'));
    expect(config).not.toMatch(/guard: \(/);
    expect(config).not.toMatch(/assign\(/);
    expect(setup).toMatch(/fetchOrderDoneToTraceShipment: \(_, output: Output<"tool.query_order">\) => output.status === "shipped",/);
    expect(setup).toContain("// output.status == 'shipped'");
    expect(config).toContain('guard: { type: "fetchOrderDoneToTraceShipment", params: ({ event }) => event.output }');
  });

  it('reads errors typed, without casts, and declares no parameter it does not use', () => {
    for (const text of Object.values(texts)) {
      expect(text).not.toMatch(/ as FlowError|\(event\.error as/);
      expect(text).not.toContain('({ context, event })');
      for (const match of text.matchAll(/\(\{ context \}(?:, \w+: [^)]+)?\)(?:: [^=]+)? =>/g)) {
        expect(bodyAt(text, match.index + match[0].length), match[0]).toMatch(/\bcontext\b/);
      }
      for (const match of text.matchAll(/\(context: \w+\)(?:: [^=]+)? =>/g)) {
        expect(bodyAt(text, match.index + match[0].length), match[0]).toMatch(/context\./);
      }
      for (const match of text.matchAll(/\(_, (\w+): [^)]+\) =>/g)) {
        expect(bodyAt(text, match.index + match[0].length), match[0]).toMatch(new RegExp(`\\b${match[1]}\\b`));
      }
    }
  });

  it('writes sibling targets by name, #id only across levels, and target-only transitions as strings', () => {
    const text = texts['order-support']!;
    expect(text).not.toContain('#order-support.active.');
    expect(text).toContain('on: { CANCEL: "cancelled" }');
    expect(text).toContain('onError: "ask_order_id"');
    expect(text).toContain('APPROVE: "refund"');
    expect([...text.matchAll(/"#order-support\.([a-z_.]+)"/g)].map((m) => m[1])).toEqual(Array(6).fill('failed'));
  });

  it('writes a single action bare, not as a one-element list', () => {
    for (const text of Object.values(texts)) expect(text).not.toMatch(/(actions|entry|exit): \[\s*[^,\]]+,?\s*\]/);
  });

  it('has one actor per tool and per model kind; states differ only in their input mapping', () => {
    const text = texts['order-support']!;
    const actors = text.slice(text.indexOf('const actors = {'), text.indexOf('};', text.indexOf('const actors = {')));
    expect([...actors.matchAll(/^ {2}"([^"]+)":/gm)].map((m) => m[1])).toEqual([
      'tool.issue_refund',
      'tool.query_order',
      'tool.resolve_user',
      'tool.trace_shipment',
      'llm.classify',
      'llm.extract',
      'llm.generate',
    ]);
    expect(text.match(/src: "llm.generate"/g)).toHaveLength(2);
  });
});

/** The body of an arrow function starting at `start` (on this line or the next), and further lines while brackets are open. */
function bodyAt(text: string, start: number): string {
  const from = start + (text.slice(start).length - text.slice(start).trimStart().length);
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    if (depth < 0 || (depth === 0 && (c === '\n' || c === ','))) return text.slice(from, i);
  }
  return text.slice(from);
}
