import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { fieldMapToZod, handoffToolName, HANDOFF_TOOL_PREFIX, type ConversationMessage, type FieldMap } from '@flowing/spec';
import { FlowingError, toFlowError } from '../../errors.ts';
import { lastUserText } from '../history.ts';
import type { AgentOutput, AgentRequest, AgentResume, LlmCallOptions } from '../types.ts';
import { complete, streamMessage, type ChatCall } from './chat.ts';
import { chatMessages } from './history.ts';
import { parseLenientJson } from './json-repair.ts';
import { checkFields, MAX_REPAIRS } from './structured.ts';

/** Tool-call arguments longer than this are refused before parsing (a runaway model, not a real call). */
export const MAX_TOOL_ARGUMENT_CHARS = 100_000;

interface PlannedCall {
  id: string;
  name: string;
  /** Parsed arguments, or the raw text when they could not be read. */
  args: unknown;
  /** The arguments exactly as the model wrote them, echoed back in the assistant message. */
  raw: string;
  /** Set when the call is answered with an error instead of running the tool. */
  refusal?: { code: string; message: string };
  /** Set when the call is a declared `transfer_to_<target>`: the loop ends with this handoff. */
  handoff?: { to: string; reason?: string };
}

/**
 * The agent loop: offer the listed tools (bound arguments left out of their schemas), run what the model calls through
 * `callTool` (the calls of one turn together; the runtime bounds how many run at once), answer every tool call id with
 * exactly one tool message in the model's order (errors included, as text the model can act on), and stop with the
 * model's text or, when it still calls tools at iteration `maxIterations`, with LLM_BAD_OUTPUT (those last calls are
 * not run). With `onDelta` the answers stream. With `request.output` the model is asked for a JSON object of those
 * fields (a JSON Schema response format); an answer that does not match is fed back at most MAX_REPAIRS times.
 * With `request.handoffs` each target is offered as a tool `transfer_to_<target>`: the first such call of a turn ends
 * the loop with `handoff` (the turn's other calls are not run, and no further model call is made); a
 * `transfer_to_` call for an undeclared target is answered with HANDOFF_UNKNOWN and the loop goes on. Calls of tools
 * `options.needsApproval` names are not run: after the turn's other calls the loop returns `suspended`, and
 * `options.resume` continues it with their answers (no model request is made again for the turns before).
 * @internal
 */
export async function runAgentLoop(call: ChatCall, request: AgentRequest, options: LlmCallOptions): Promise<AgentOutput> {
  const maxIterations = Math.floor(request.maxIterations);
  if (!(maxIterations >= 1))
    throw new FlowingError('LLM_BAD_OUTPUT', `agent maxIterations must be at least 1, got ${request.maxIterations}`);
  const tools = offeredTools(request, options);
  if (tools.length > 0 && !options.callTool) {
    throw new FlowingError(
      'LLM_NOT_CONFIGURED',
      'the agent lists tools but no callTool runner was given; the runtime must pass options.callTool',
    );
  }
  const structured = request.output ? structuredOutput(request.output) : undefined;
  const resume = options.resume;
  const messages: ChatCompletionMessageParam[] = resume
    ? [...(resume.messages as ChatCompletionMessageParam[]), ...resumedAnswers(resume)]
    : chatMessages(request, request.system, request.prompt);
  // With a history, the call's new messages go back to the conversation (AgentOutput.messages), pairs intact.
  const transcript = request.history ? (resume ? resumedTranscript(resume) : newMessages(request)) : undefined;
  const answer = (text: string, steps: number, output?: Record<string, unknown>): AgentOutput => {
    transcript?.push({ role: 'assistant', content: text });
    return { text, steps, ...(output ? { output } : {}), ...(transcript ? { messages: transcript } : {}) };
  };
  const params = () => ({
    messages,
    ...(tools.length > 0 ? { tools, tool_choice: 'auto' as const } : {}),
    ...(structured ? { response_format: structured.format } : {}),
  });

  let repairs = 0;
  for (let iteration = (resume?.iteration ?? 0) + 1; iteration <= maxIterations; iteration++) {
    const reply = options.onDelta ? await streamMessage(call, params(), options.onDelta) : await complete(call, params());
    const planned = (reply.tool_calls ?? []).map((toolCall, index) => planCall(toolCall, index, iteration, request));
    const text = reply.content || undefined;
    options.onStep?.({
      iteration,
      toolCalls: planned.map(({ id, name, args, refusal }) => ({ id, name, args, ...(refusal ? { refused: refusal } : {}) })),
      ...(text ? { text } : {}),
    });
    const handing = planned.find((p) => p.handoff);
    if (handing?.handoff) {
      // The conversation goes along with the handoff: the transfer call and its result close the pair in it.
      transcript?.push(
        { role: 'assistant', content: reply.content ?? '', toolCalls: [{ id: handing.id, name: handing.name, args: handing.args }] },
        { role: 'tool', toolCallId: handing.id, name: handing.name, content: JSON.stringify({ handoff: handing.handoff.to }), ok: true },
      );
      const message = request.prompt || lastUserText(request.history);
      return { text: '', steps: iteration, handoff: { ...handing.handoff, message }, ...(transcript ? { messages: transcript } : {}) };
    }
    if (planned.length === 0) {
      if (!structured) return answer(text ?? '', iteration);
      const checked = checkFields(text ?? '', structured.schema, request.output!);
      if (checked.ok) return answer(text ?? '', iteration, checked.value);
      if (repairs >= MAX_REPAIRS) {
        throw new FlowingError(
          'LLM_BAD_OUTPUT',
          `the agent's answer is still not the asked-for object after ${MAX_REPAIRS} repairs: ${checked.problem}`,
          {
            details: { problem: checked.problem, ...(checked.issues === undefined ? {} : { issues: checked.issues }) },
          },
        );
      }
      // A re-ask is not a new step of the task: it does not use up an iteration.
      repairs += 1;
      iteration -= 1;
      messages.push(
        { role: 'assistant', content: text ?? '' },
        { role: 'user', content: `That answer is not valid: ${checked.problem}. Reply again with only the corrected JSON object.` },
      );
      continue;
    }
    if (iteration === maxIterations) break;

    messages.push({
      role: 'assistant',
      content: reply.content || null,
      tool_calls: planned.map((p) => ({ id: p.id, type: 'function' as const, function: { name: p.name, arguments: p.raw } })),
    });
    transcript?.push({
      role: 'assistant',
      content: reply.content ?? '',
      toolCalls: planned.map(({ id, name, args }) => ({ id, name, args })),
    });
    // Calls of tools a person must approve are not run: the loop stops after this turn's other calls and asks.
    const proposed = planned.filter((p) => !p.refusal && options.needsApproval?.(p.name));
    const answers = await Promise.all(planned.map((p) => (proposed.includes(p) ? undefined : answerCall(p, options, call.signal))));
    if (proposed.length > 0) {
      return {
        text: '',
        steps: iteration,
        suspended: {
          iteration,
          messages: [...messages],
          answers: Object.fromEntries(planned.flatMap((p, i) => (answers[i] === undefined ? [] : [[p.id, answers[i].content]]))),
          pending: proposed.map(({ id, name, args }) => ({ id, name, args })),
          ...(transcript ? { conversation: [...transcript] } : {}),
        },
      };
    }
    planned.forEach((p, i) => messages.push({ role: 'tool', tool_call_id: p.id, content: answers[i]!.content }));
    transcript?.push(
      ...planned.map((p, i) => ({
        role: 'tool' as const,
        toolCallId: p.id,
        name: p.name,
        content: answers[i]!.content,
        ok: answers[i]!.ok,
      })),
    );
  }
  throw new FlowingError(
    'LLM_BAD_OUTPUT',
    `the agent still called tools after ${maxIterations} iterations (its maxIterations); simplify the task or raise the limit`,
    {
      details: { maxIterations },
    },
  );
}

/** The conversation of a resumed loop: as it stopped, with the results of its last turn's calls (pairs intact). */
function resumedTranscript(resume: AgentResume): ConversationMessage[] {
  const last = resume.messages.at(-1) as { tool_calls?: Array<{ id: string; function: { name: string } }> } | undefined;
  const results = (last?.tool_calls ?? []).map((c) => {
    const content = resume.answers[c.id] ?? JSON.stringify({ error: { code: 'TOOL_FAILED', message: 'the call has no answer' } });
    return { role: 'tool' as const, toolCallId: c.id, name: c.function.name, content, ok: !content.startsWith('{"error":') };
  });
  return [...(resume.conversation ?? []), ...results];
}

/** The tool messages that answer the last turn of a resumed loop, in the model's order of its calls. */
function resumedAnswers(resume: AgentResume): ChatCompletionMessageParam[] {
  const last = resume.messages.at(-1) as { tool_calls?: Array<{ id: string }> } | undefined;
  return (last?.tool_calls ?? []).map((c) => ({
    role: 'tool' as const,
    tool_call_id: c.id,
    content: resume.answers[c.id] ?? JSON.stringify({ error: { code: 'TOOL_FAILED', message: 'the call has no answer' } }),
  }));
}

/** The JSON Schema response format of a structured answer, and the zod schema that checks it. */
function structuredOutput(fields: FieldMap) {
  const schema = fieldMapToZod(fields);
  const format: ResponseFormatJSONSchema = {
    type: 'json_schema',
    // Not strict: OpenAI's strict mode needs every field required; the runtime checks the answer and repairs it.
    json_schema: { name: 'answer', schema: z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>, strict: false },
  };
  return { schema, format };
}

function offeredTools(request: AgentRequest, options: LlmCallOptions): ChatCompletionFunctionTool[] {
  const handoffs = (request.handoffs ?? []).map(
    (target): ChatCompletionFunctionTool => ({
      type: 'function',
      function: {
        name: handoffToolName(target),
        description: `Hand the conversation over to ${target}. Call this instead of answering when ${target} should take it from here.`,
        parameters: {
          type: 'object',
          properties: { reason: { type: 'string', description: 'Why, in one sentence.' } },
          additionalProperties: false,
        },
      },
    }),
  );
  return [...toolsOffered(request, options), ...handoffs];
}

function toolsOffered(request: AgentRequest, options: LlmCallOptions): ChatCompletionFunctionTool[] {
  return request.tools.map((name) => {
    const schema = options.toolSchemas?.[name];
    const parameters = schema?.parameters ?? { type: 'object', additionalProperties: true };
    return {
      type: 'function',
      function: {
        name,
        description: schema?.description ?? `The ${name} tool.`,
        parameters: withoutBound(parameters, Object.keys(request.bound?.[name] ?? {})),
      },
    };
  });
}

/** A tool's input schema without the arguments the spec binds: the model is not asked for what the session knows. */
export function withoutBound(parameters: Record<string, unknown>, bound: readonly string[]): Record<string, unknown> {
  if (bound.length === 0) return parameters;
  const properties = { ...((parameters.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const field of bound) delete properties[field];
  const required = Array.isArray(parameters.required) ? parameters.required.filter((f) => !bound.includes(f as string)) : undefined;
  return { ...parameters, properties, ...(required ? { required } : {}) };
}

function planCall(toolCall: ChatCompletionMessageToolCall, index: number, iteration: number, request: AgentRequest): PlannedCall {
  // Some OpenAI-compatible servers omit ids; pairing needs one, and the assistant message echoes it back.
  const id = toolCall.id || `call_${iteration}_${index}`;
  const handoffs = request.handoffs ?? [];
  const allowed = [...request.tools, ...handoffs.map(handoffToolName)];
  if (toolCall.type !== 'function') {
    const name = toolCall.custom?.name ?? '(custom)';
    return {
      id,
      name,
      args: toolCall.custom?.input,
      raw: '{}',
      refusal: { code: 'TOOL_UNKNOWN', message: `'${name}' is a custom tool; only these function tools exist: ${allowed.join(', ')}` },
    };
  }
  const { name, arguments: raw } = toolCall.function;
  if (name.startsWith(HANDOFF_TOOL_PREFIX) && !request.tools.includes(name)) return planHandoff(id, name, raw, handoffs);
  if (!allowed.includes(name)) {
    return {
      id,
      name,
      args: raw,
      raw,
      refusal: { code: 'TOOL_UNKNOWN', message: `there is no tool named '${name}'; the tools are: ${allowed.join(', ') || '(none)'}` },
    };
  }
  if (raw.length > MAX_TOOL_ARGUMENT_CHARS) {
    return {
      id,
      name,
      args: `(${raw.length} characters)`,
      raw: '{}',
      refusal: {
        code: 'BAD_ARGUMENTS',
        message: `the arguments are ${raw.length} characters long, over the limit of ${MAX_TOOL_ARGUMENT_CHARS}`,
      },
    };
  }
  if (raw.trim() === '') return { id, name, args: {}, raw };
  const parsed = parseLenientJson(raw);
  if (!parsed.ok) {
    return {
      id,
      name,
      args: raw,
      raw,
      refusal: {
        code: 'BAD_ARGUMENTS',
        message: `the arguments are not valid JSON (${parsed.message}); call the tool again with a JSON object`,
      },
    };
  }
  return { id, name, args: parsed.value, raw };
}

/** A `transfer_to_<target>` call: the handoff when the target is declared, else a HANDOFF_UNKNOWN refusal. */
function planHandoff(id: string, name: string, raw: string, handoffs: readonly string[]): PlannedCall {
  const to = name.slice(HANDOFF_TOOL_PREFIX.length);
  if (!handoffs.includes(to)) {
    return {
      id,
      name,
      args: raw,
      raw,
      refusal: {
        code: 'HANDOFF_UNKNOWN',
        message: `there is no handoff to '${to.slice(0, 80)}'; you can hand off with: ${handoffs.map(handoffToolName).join(', ') || '(none)'}`,
      },
    };
  }
  // The reason is optional: arguments that cannot be read still hand off, without one.
  const parsed = raw.length <= MAX_TOOL_ARGUMENT_CHARS && raw.trim() !== '' ? parseLenientJson(raw) : undefined;
  const reason = parsed?.ok ? (parsed.value as { reason?: unknown } | null)?.reason : undefined;
  return {
    id,
    name,
    args: parsed?.ok ? parsed.value : {},
    raw,
    handoff: { to, ...(typeof reason === 'string' && reason !== '' ? { reason } : {}) },
  };
}

/** The prompt of an agent call as the first of its new messages, when it has one. */
function newMessages(request: AgentRequest): ConversationMessage[] {
  return request.prompt === '' ? [] : [{ role: 'user', content: request.prompt }];
}

/** What the model is told a tool call gave (JSON text), and whether it succeeded. */
async function answerCall(p: PlannedCall, options: LlmCallOptions, signal: AbortSignal): Promise<{ content: string; ok: boolean }> {
  if (p.refusal) return { content: JSON.stringify({ error: p.refusal }), ok: false };
  if (signal.aborted) throw new FlowingError('CANCELLED', `the agent was cancelled before tool '${p.name}' ran`, { cause: signal.reason });
  let result: Awaited<ReturnType<NonNullable<LlmCallOptions['callTool']>>>;
  try {
    result = await options.callTool!(p.name, p.args);
  } catch (error) {
    if (signal.aborted) throw new FlowingError('CANCELLED', `the agent was cancelled while tool '${p.name}' ran`, { cause: signal.reason });
    const flow = toFlowError(error, 'TOOL_FAILED');
    result = { ok: false, error: { code: flow.code, message: flow.message } };
  }
  if (signal.aborted) throw new FlowingError('CANCELLED', `the agent was cancelled while tool '${p.name}' ran`, { cause: signal.reason });
  return result.ok
    ? { content: JSON.stringify(result.output) ?? 'null', ok: true }
    : { content: JSON.stringify({ error: { code: result.error.code, message: result.error.message } }), ok: false };
}
