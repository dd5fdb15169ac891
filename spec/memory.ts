import type { Report } from './graph-checks.ts';
import type { FieldMap, LlmInvokeSpec, MemorySpec } from './schema.ts';

/** The text every summary has besides its kept facts; no kept fact may take its name. */
export const SUMMARY_CONTENT_FIELD = 'content';

/**
 * The facts a summary keeps, as fields: a name list keeps each as an optional text fact (one the conversation has
 * not mentioned yet is left out), a field map keeps them as declared.
 * @example memoryFacts({ window: 4, summarize: { after: 12, keep: ['orderId'] } }) // { orderId: { type: 'string', optional: true } }
 */
export function memoryFacts(memory: MemorySpec): FieldMap {
  const keep = memory.summarize?.keep;
  if (keep === undefined) return {};
  if (!Array.isArray(keep)) return keep;
  return Object.fromEntries(keep.map((name) => [name, { type: 'string' as const, optional: true }]));
}

/**
 * A call's `memory` against its call: a window of at least one turn, a summary threshold above the window (else
 * every call would fold the turns it is about to send verbatim), a `history` to trim, and scripted patterns that
 * name kept facts. Fact names and types are checked by the caller like any field map.
 */
export function checkMemory(invoke: LlmInvokeSpec, at: Array<string | number>, report: Report): void {
  const memory = invoke.memory;
  if (memory === undefined) return;
  const here = [...at, 'memory'];
  if ((invoke as { history?: unknown }).history === undefined)
    report(
      'SPEC_MEMORY_WITHOUT_HISTORY',
      here,
      `"memory" trims the conversation a call reads; add "history": "context.<conversation field>"`,
    );
  if (memory.window < 1) report('SPEC_INVALID_MEMORY', [...here, 'window'], `window must be at least 1 turn; got ${memory.window}`);
  const summarize = memory.summarize;
  if (summarize === undefined) return;
  if (summarize.after <= memory.window)
    report(
      'SPEC_INVALID_MEMORY',
      [...here, 'summarize', 'after'],
      `summarize.after (${summarize.after}) must be greater than window (${memory.window}): a summary folds what the window no longer holds`,
    );
  const facts = memoryFacts(memory);
  if (Object.hasOwn(facts, SUMMARY_CONTENT_FIELD)) {
    const where = Array.isArray(summarize.keep) ? summarize.keep.indexOf(SUMMARY_CONTENT_FIELD) : SUMMARY_CONTENT_FIELD;
    report(
      'SPEC_INVALID_MEMORY',
      [...here, 'summarize', 'keep', where],
      `'${SUMMARY_CONTENT_FIELD}' is the summary's own text; name the fact otherwise`,
    );
  }
  if (Array.isArray(summarize.keep)) {
    const seen = new Set<string>();
    summarize.keep.forEach((name, i) => {
      if (seen.has(name)) report('SPEC_DUPLICATE_NAME', [...here, 'summarize', 'keep', i], `kept fact '${name}' appears more than once`);
      seen.add(name);
    });
  }
  for (const [fact, source] of Object.entries(summarize.scripted?.patterns ?? {})) {
    const pointer = [...here, 'summarize', 'scripted', 'patterns', fact];
    if (!Object.hasOwn(facts, fact.split('.')[0]!) && fact !== SUMMARY_CONTENT_FIELD)
      report('SPEC_LLM_FIELD_NOT_ALLOWED', pointer, `scripted pattern for '${fact}', which is not a kept fact`);
    try {
      new RegExp(source);
    } catch (err) {
      report('SPEC_INVALID_REGEX', pointer, `pattern is not a valid regular expression: ${(err as Error).message}`);
    }
  }
}
