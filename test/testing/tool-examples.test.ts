import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@flowing/runtime';
import * as tools from '../../tools/index.ts';

const base = {
  name: 'lookup',
  description: 'looks up',
  input: z.object({ id: z.string().min(1) }),
  output: z.object({ found: z.boolean() }),
  errors: { NOT_FOUND: 'no such id' },
  async run() {
    return { found: true };
  },
};

describe('tool examples', () => {
  it('keeps examples and error examples that match the tool contract', () => {
    const tool = defineTool({
      ...base,
      examples: [{ input: { id: 'a' }, output: { found: true } }],
      errorExamples: [{ input: { id: 'b' }, error: { code: 'NOT_FOUND', message: 'no b' } }],
    });
    expect(tool.examples).toEqual([{ input: { id: 'a' }, output: { found: true } }]);
    expect(tool.errorExamples).toEqual([{ input: { id: 'b' }, error: { code: 'NOT_FOUND', message: 'no b' } }]);
  });

  it('refuses an example whose input breaks the input schema with TOOL_EXAMPLE_INVALID naming the example', () => {
    expect(() => defineTool({ ...base, examples: [{ input: { id: '' }, output: { found: true } }] })).toThrow(
      expect.objectContaining({
        code: 'TOOL_EXAMPLE_INVALID',
        message: expect.stringContaining("tool 'lookup' examples[0].input"),
      }),
    );
  });

  it('refuses an example whose output breaks the output schema with TOOL_EXAMPLE_INVALID', () => {
    expect(() => defineTool({ ...base, examples: [{ input: { id: 'a' }, output: { found: 'yes' } as never }] })).toThrow(
      expect.objectContaining({
        code: 'TOOL_EXAMPLE_INVALID',
        message: expect.stringContaining('examples[0].output'),
      }),
    );
  });

  it('refuses an error example with a code the tool does not declare', () => {
    expect(() => defineTool({ ...base, errorExamples: [{ input: { id: 'a' }, error: { code: 'NOPE', message: 'x' } }] })).toThrow(
      expect.objectContaining({
        code: 'TOOL_EXAMPLE_INVALID',
        message: expect.stringContaining("code 'NOPE' is not declared"),
      }),
    );
  });

  it('every example tool declares at least one example and one error example', () => {
    for (const tool of Object.values(tools)) {
      expect(tool.examples.length, tool.name).toBeGreaterThan(0);
      expect(tool.errorExamples.length, tool.name).toBeGreaterThan(0);
    }
  });
});
