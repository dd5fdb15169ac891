import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argsHash, stableJson } from '@flowing/runtime';

/** The definition: JSON.stringify with every plain object's keys sorted. */
function reference(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, (v as Record<string, unknown>)[k]]),
          )
        : v,
    ) ?? 'null'
  );
}

/** The same object with its keys inserted in reverse order. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  );
}

describe('stableJson (the text argument and request hashes are taken of)', () => {
  it('writes any JSON value as JSON.stringify with sorted keys would, whatever order its keys were made in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stableJson(value)).toBe(reference(value));
        expect(stableJson(reversed(value))).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
  });

  it('orders keys by code unit, escapes keys that need it, and skips undefined and functions as JSON does', () => {
    const value = { b: 1, a: [undefined, () => 1], é: 2, Z: { '"q"': 3, 'line\nbreak': 4 }, u: undefined, f: () => 1, n: Number.NaN };
    expect(stableJson(value)).toBe(reference(value));
    expect(stableJson(value)).toBe('{"Z":{"\\"q\\"":3,"line\\nbreak":4},"a":[null,null],"b":1,"n":null,"é":2}');
  });

  it('hashes equal arguments equally and different ones differently', () => {
    expect(argsHash({ amount: 25, order: 'A1' })).toBe(argsHash({ order: 'A1', amount: 25 }));
    expect(argsHash({ amount: 25, order: 'A1' })).not.toBe(argsHash({ amount: 9999, order: 'A1' }));
    expect(argsHash({ amount: 25 })).toMatch(/^[0-9a-f]{64}$/);
  });
});
