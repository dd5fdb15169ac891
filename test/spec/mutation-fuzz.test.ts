import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSpecText } from '../../spec/index.ts';

const example = JSON.parse(readFileSync('machines/order-support/order-support.flow.json', 'utf8'));

/** Resolves a JSON pointer in a document; true when every segment exists. */
function resolves(doc: unknown, pointer: string): boolean {
  if (pointer === '') return true;
  let cursor: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!cursor || typeof cursor !== 'object' || !Object.hasOwn(cursor, key)) return false;
    cursor = (cursor as Record<string, unknown>)[key];
  }
  return true;
}

const hostileValue = fc.oneof(
  fc.constantFrom(
    null,
    0,
    -1,
    Number.POSITIVE_INFINITY,
    true,
    '',
    '__proto__',
    'constructor',
    "'; process.exit(1); '",
    '*/',
    '${x}',
    '\u2028',
    [],
    {},
    [[[]]],
  ),
  fc.string(),
  fc.integer(),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 3 }),
);

/** Every path of objects/arrays in the example, so mutations land everywhere. */
function paths(value: unknown, at: string[] = []): string[][] {
  if (!value || typeof value !== 'object') return [at];
  return [at, ...Object.keys(value).flatMap((k) => paths((value as Record<string, unknown>)[k], [...at, k]))];
}
const allPaths = paths(example);

function mutate(doc: unknown, path: string[], action: 'set' | 'delete' | 'rename', value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string, unknown>;
  if (path.length === 0) return value;
  let parent: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (action === 'delete') delete parent[last];
  else if (action === 'rename') {
    parent[`${last}_x`] = parent[last];
    delete parent[last];
  } else parent[last] = value;
  return copy;
}

describe('spec loader under mutation (RELIABILITY B7)', () => {
  it('never throws, and every problem path points into the document', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...allPaths),
        fc.constantFrom('set', 'delete', 'rename' as const),
        hostileValue,
        (path, action, value) => {
          const doc = mutate(example, path, action as 'set', value);
          const text = JSON.stringify(doc) ?? 'null';
          const result = parseSpecText(text);
          for (const problem of result.problems) {
            expect(problem.code).toMatch(/^SPEC_/);
            const parent = problem.path.split('/').slice(0, -1).join('/');
            expect(resolves(doc, problem.path) || resolves(doc, parent)).toBe(true);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never throws on truncated or byte-flipped text', () => {
    const text = JSON.stringify(example, null, 2);
    fc.assert(
      fc.property(fc.nat(text.length - 1), fc.integer({ min: 0, max: 255 }), (offset, byte) => {
        const truncated = parseSpecText(text.slice(0, offset));
        expect(truncated.ok).toBe(false);
        const flipped = text.slice(0, offset) + String.fromCharCode(byte) + text.slice(offset + 1);
        expect(() => parseSpecText(flipped)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('answers a 10,000-deep nested document with a problem, not a stack overflow', () => {
    const deep = '{"specVersion":1,"id":"x","states":' + '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000) + '}';
    const result = parseSpecText(deep);
    expect(result.ok).toBe(false);
    expect(result.problems.length).toBeGreaterThan(0);
  });
});
