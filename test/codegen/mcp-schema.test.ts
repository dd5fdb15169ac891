import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mcpContract, mcpToolName } from '@flowing/spec';
import { zodSource } from '../../codegen/mcp/json-schema-zod.ts';

/** Evaluates generated zod source, as the generated module would. */
const evaluate = (source: string) => new Function('z', `return ${source};`)(z) as z.ZodType;

describe('MCP tool hints as a Flowing contract', () => {
  it("follows MCP's defaults: a tool that says nothing is destructive, so high risk and never retried", () => {
    expect(mcpContract()).toEqual({ risk: 'high', idempotent: false });
    expect(mcpContract({ destructiveHint: false })).toEqual({ risk: 'medium', idempotent: false });
    expect(mcpContract({ destructiveHint: false, idempotentHint: true })).toEqual({ risk: 'medium', idempotent: true });
    expect(mcpContract({ readOnlyHint: true })).toEqual({ risk: 'low', idempotent: true });
  });

  it('names a server tool <server>_<snake_case tool>', () => {
    expect(mcpToolName('docs', 'searchPages')).toBe('docs_search_pages');
    expect(mcpToolName('docs', 'get-page.v2')).toBe('docs_get_page_v2');
    expect(mcpToolName('gh', '--')).toBe('gh_tool');
  });
});

describe('JSON Schema of an MCP tool as zod source', () => {
  it('keeps required and optional fields, enums, arrays, nested objects, unions and descriptions', () => {
    const schema = evaluate(
      zodSource({
        type: 'object',
        properties: {
          query: { type: 'string', description: 'what to look for' },
          limit: { type: 'integer' },
          mode: { enum: ['fast', 'exact'] },
          tags: { type: 'array', items: { type: 'string' } },
          filter: { type: 'object', properties: { after: { type: ['string', 'null'] } }, required: ['after'] },
          id: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        },
        required: ['query'],
      }),
    );
    expect(schema.safeParse({ query: 'x', limit: 2, mode: 'fast', tags: ['a'], filter: { after: null }, id: 3 }).success).toBe(true);
    expect(schema.safeParse({ limit: 2 }).success).toBe(false);
    expect(schema.safeParse({ query: 'x', limit: 2.5 }).success).toBe(false);
    expect(schema.safeParse({ query: 'x', mode: 'slow' }).success).toBe(false);
    expect(schema.safeParse({ query: 'x', filter: {} }).success).toBe(false);
    expect(zodSource({ type: 'string', description: 'a "quoted" text' })).toBe('z.string().describe("a \\"quoted\\" text")');
  });

  it('accepts anything where the schema says nothing it can express, and never recurses without end', () => {
    expect(zodSource({})).toBe('z.unknown()');
    expect(zodSource(null)).toBe('z.unknown()');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100; i++) deep = { type: 'array', items: deep };
    expect(() => evaluate(zodSource(deep))).not.toThrow();
  });
});
