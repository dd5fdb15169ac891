import { historyField } from '@flowing/spec';

/** The memory line of a call block: short text on the canvas, the full sentence on hover. */
export interface MemoryLine {
  /** `memory: <conversation> · <settings>` */
  text: string;
  /** The conversation read: its field name, the expression as written, or `no history`. */
  source: string;
  /** What is kept of it: `all turns`, or `last N` and `summary`. */
  settings: string[];
  title: string;
}

interface MemoryFacts {
  window?: unknown;
  summarize?: { after?: unknown; keep?: unknown };
  maxPromptTokens?: unknown;
}

/**
 * What a model call keeps of its conversation, as one line (`memory: support · last 20 · summary`), or undefined for
 * a call that reads none (and for tool and machine calls). Read loosely: values the schema refuses are drawn as
 * written, and the problem is shown at the field.
 * @example memoryLine({ llm: 'agent', history: 'context.chat', memory: { window: 8 } })?.text // 'memory: chat · last 8'
 */
export function memoryLine(invoke: unknown): MemoryLine | undefined {
  if (!invoke || typeof invoke !== 'object' || !('llm' in invoke)) return undefined;
  const { history, memory } = invoke as { history?: unknown; memory?: MemoryFacts };
  if (history === undefined && memory === undefined) return undefined;
  const source = typeof history === 'string' ? history : undefined;
  const name = source === undefined ? 'no history' : (historyField(source) ?? source);
  const parts: string[] = [];
  const sentence = [source === undefined ? 'Reads no conversation ("history" is not set)' : `Reads the conversation ${source}`];
  if (memory === undefined || typeof memory !== 'object') {
    parts.push('all turns');
    sentence[0] += ': every turn';
  } else {
    parts.push(`last ${String(memory.window)}`);
    sentence[0] += `: the last ${String(memory.window)} turns verbatim`;
    const summarize = memory.summarize;
    if (summarize && typeof summarize === 'object') {
      parts.push('summary');
      const keep = Array.isArray(summarize.keep) ? summarize.keep : summarize.keep ? Object.keys(summarize.keep) : [];
      sentence.push(
        `older turns are summarised once more than ${String(summarize.after)} are not${keep.length > 0 ? ` (keeps ${keep.join(', ')})` : ''}`,
      );
    }
    if (memory.maxPromptTokens !== undefined) sentence.push(`the prompt is kept within ${String(memory.maxPromptTokens)} tokens`);
  }
  return { text: [`memory: ${name}`, ...parts].join(' · '), source: name, settings: parts, title: sentence.join('; ') };
}
