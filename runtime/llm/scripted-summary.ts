import { SUMMARY_CONTENT_FIELD, type FieldType } from '@flowing/spec';
import { readMatch } from './scripted-fill.ts';
import type { ExtractOutput, ExtractRequest } from './types.ts';

/**
 * The scripted provider's summary, deterministic: each kept fact takes the last match of its pattern in the
 * transcript (an array fact every match, after the values it had), else the value the previous summary kept; the
 * text lists the facts kept and how many messages the summary covers.
 * @example scriptedSummary({ kind: 'extract', text: 'user: order A7', fields, scripted: { patterns: { orderId: 'order (A\\d+)' } }, summary })
 */
export function scriptedSummary(request: ExtractRequest & { summary: NonNullable<ExtractRequest['summary']> }): ExtractOutput {
  const { previousFacts, covers } = request.summary;
  const facts: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(request.fields)) {
    if (name === SUMMARY_CONTENT_FIELD) continue;
    const source = request.scripted?.patterns?.[name];
    const matches = source ? [...request.text.matchAll(new RegExp(source, 'gi'))].map((m) => m[1] ?? m[0]) : [];
    const previous = previousFacts[name];
    const value =
      type.type === 'array'
        ? mergeList(
            previous,
            matches.map((m) => readMatch(type.items, m)),
          )
        : lastOf(type, matches, previous);
    if (value !== undefined) facts[name] = value;
    else if (!type.optional) facts[name] = type.type === 'number' ? 0 : type.type === 'boolean' ? false : '';
  }
  const listed = Object.entries(facts).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join('; ') : String(value)}`);
  return { ...facts, [SUMMARY_CONTENT_FIELD]: `Summary of the first ${covers} messages. ${listed.join('. ')}`.trim() };
}

function lastOf(type: FieldType, matches: string[], previous: unknown): unknown {
  const last = matches.length > 0 ? readMatch(type, matches[matches.length - 1]!) : undefined;
  return last ?? previous;
}

/** An array fact keeps what it had and adds what the folded messages bring, each value once, in order. */
function mergeList(previous: unknown, found: unknown[]): unknown[] | undefined {
  const merged = [...(Array.isArray(previous) ? previous : []), ...found];
  const seen = new Set<string>();
  const out = merged.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return out.length > 0 || Array.isArray(previous) ? out : undefined;
}
