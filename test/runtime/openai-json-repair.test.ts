import { describe, expect, it } from 'vitest';
import { parseLenientJson } from '../../runtime/llm/openai/json-repair.ts';

describe('parseLenientJson', () => {
  it('reads strict JSON as is', () => {
    expect(parseLenientJson('{"a":[1,2],"b":"x"}')).toEqual({ ok: true, value: { a: [1, 2], b: 'x' }, repaired: false });
  });

  it.each([
    ['a code fence', '```json\n{"a": 1}\n```', { a: 1 }],
    ['prose around the object', 'Here you go: {"a": 1} — hope it helps', { a: 1 }],
    ['trailing commas', '{"a": [1, 2,], "b": 3,}', { a: [1, 2], b: 3 }],
    ['single-quoted strings', "{'a': 'it\\'s \"fine\"'}", { a: 'it\'s "fine"' }],
    ['unquoted keys', '{order_id: "A1", qty: 2}', { order_id: 'A1', qty: 2 }],
  ])('repairs %s', (_name, text, value) => {
    expect(parseLenientJson(text)).toEqual({ ok: true, value, repaired: true });
  });

  it('leaves commas and quotes inside strings alone', () => {
    expect(parseLenientJson("{'a': 'x, }', \"b\": \"it's\",}")).toEqual({ ok: true, value: { a: 'x, }', b: "it's" }, repaired: true });
  });

  it('refuses text that stays ambiguous, with the strict parser message', () => {
    const result = parseLenientJson("{'a': 'it's'}");
    expect(result.ok).toBe(false);
    expect(parseLenientJson('{"order_id": "A10')).toMatchObject({ ok: false, message: expect.stringContaining('JSON') });
  });
});
