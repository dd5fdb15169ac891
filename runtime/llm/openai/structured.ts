import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { fieldMapToZod, MAX_LLM_REPAIRS, type FieldMap } from '@flowing/spec';
import { FlowingError } from '../../errors.ts';
import type { ClassifyRequest, ExtractRequest } from '../types.ts';
import { complete, type ChatCall } from './chat.ts';
import { chatMessages } from './history.ts';
import { parseLenientJson } from './json-repair.ts';

/** Validation feedback sends the model's answer back at most this many times. */
export const MAX_REPAIRS = MAX_LLM_REPAIRS;

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string; issues?: unknown };

/**
 * Asks for a JSON object until `check` accepts it: each refusal is fed back to the model with the reason, at
 * most MAX_REPAIRS times; then LLM_BAD_OUTPUT with the last problem, the attempts and the usage in `details`.
 */
async function askForJson<T>(
  call: ChatCall,
  messages: ChatCompletionMessageParam[],
  check: (content: string) => Checked<T>,
  task: string,
): Promise<T> {
  const conversation = [...messages];
  let last: Extract<Checked<T>, { ok: false }> | undefined;
  for (let attempt = 0; attempt <= MAX_REPAIRS; attempt++) {
    const message = await complete(call, { messages: conversation, response_format: { type: 'json_object' } });
    const content = message.content ?? '';
    const checked = check(content);
    if (checked.ok) return checked.value;
    last = checked;
    conversation.push(
      { role: 'assistant', content },
      { role: 'user', content: `That answer is not valid: ${checked.problem}. Reply again with only the corrected JSON object.` },
    );
  }
  throw new FlowingError(
    'LLM_BAD_OUTPUT',
    `model '${call.model}' gave no valid ${task} after ${MAX_REPAIRS} repairs: ${last?.problem ?? 'no answer'}`,
    {
      details: { problem: last?.problem, ...(last?.issues === undefined ? {} : { issues: last.issues }) },
    },
  );
}

function systemText(request: { system?: string; prompt?: string }, instructions: string): string {
  return [request.system, request.prompt, instructions].filter((part) => part !== undefined && part.trim() !== '').join('\n\n');
}

/** classify: one label, asked for as `{ "label": ... }` and checked against the list. @internal */
export async function classifyWithRepair(call: ChatCall, request: ClassifyRequest): Promise<string> {
  if (request.labels.length === 0) throw new FlowingError('LLM_BAD_OUTPUT', 'classify was given no labels; list them in the spec');
  const list = request.labels.map((label) => JSON.stringify(label)).join(', ');
  const instructions = `Classify the user's text into exactly one of these labels: ${list}. Answer with a JSON object of the form {"label": "<one of the labels>"} and nothing else.`;
  const messages = chatMessages(request, systemText(request, instructions), request.text);
  return askForJson(call, messages, (content) => checkLabel(content, request.labels, list), 'label');
}

function checkLabel(content: string, labels: readonly string[], list: string): Checked<string> {
  const parsed = parseLenientJson(content);
  const raw = parsed.ok
    ? typeof parsed.value === 'string'
      ? parsed.value
      : (parsed.value as { label?: unknown } | null)?.label
    : content.trim().replace(/^["']|["']$/g, '');
  if (typeof raw !== 'string') {
    return { ok: false, problem: parsed.ok ? 'the JSON object has no string "label"' : `it is not JSON (${parsed.message})` };
  }
  const exact = labels.find((label) => label === raw.trim());
  const loose = exact ?? labels.find((label) => label.toLowerCase() === raw.trim().toLowerCase());
  if (loose !== undefined) return { ok: true, value: loose };
  return { ok: false, problem: `${JSON.stringify(raw)} is not one of the labels ${list}` };
}

/** extract: a JSON object checked with the field map's zod schema; zod issues are fed back. @internal */
export async function extractWithRepair(call: ChatCall, request: ExtractRequest): Promise<Record<string, unknown>> {
  const schema = fieldMapToZod(request.fields);
  const jsonSchema = z.toJSONSchema(schema, { unrepresentable: 'any' });
  const instructions = `Extract these fields from the user's text. Answer with only a JSON object that matches this JSON Schema (leave out optional fields you cannot fill):\n${JSON.stringify(jsonSchema)}`;
  const messages = chatMessages(request, systemText(request, instructions), request.text);
  return askForJson(call, messages, (content) => checkFields(content, schema, request.fields), 'extraction');
}

/** Reads a model's JSON answer as an object of the field map, or says what is wrong with it. @internal */
export function checkFields(content: string, schema: z.ZodObject, fields: FieldMap): Checked<Record<string, unknown>> {
  const parsed = parseLenientJson(content);
  if (!parsed.ok) return { ok: false, problem: `it is not JSON (${parsed.message})` };
  if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    return { ok: false, problem: 'it is not a JSON object' };
  }
  // Models often write null for a field they could not fill; for an optional field that means "absent".
  const value: Record<string, unknown> = { ...(parsed.value as Record<string, unknown>) };
  for (const [field, type] of Object.entries(fields)) if (type.optional && value[field] === null) delete value[field];
  const checked = schema.safeParse(value);
  if (checked.success) return { ok: true, value: checked.data as Record<string, unknown> };
  const issues = checked.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
  return { ok: false, problem: issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; '), issues };
}
