import type { Clock } from '../clock.ts';
import { Deadline } from '../deadline.ts';
import { FlowingError, formatIssues, toFlowError, type FlowError } from '../errors.ts';
import { zodSchema, type AnyTool } from '../tool.ts';

/** Checks arguments against the tool's input schema; a breach is a `TOOL_CONTRACT` error naming the zod issues. */
export function parseToolInput(tool: AnyTool, args: unknown): { ok: true; args: unknown } | { ok: false; error: FlowError } {
  const parsed = zodSchema(tool.input).safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data };
  return {
    ok: false,
    error: {
      code: 'TOOL_CONTRACT',
      message: `input of tool '${tool.name}' does not match its contract: ${formatIssues(parsed.error.issues)}`,
      details: { side: 'input', issues: parsed.error.issues },
    },
  };
}

export interface ToolAttemptOptions {
  idempotencyKey: string;
  /** Aborts the attempt (cancel): a caller's AbortSignal or the call's Deadline; the timeout is added on top. */
  deadline: AbortSignal | Deadline;
  timeoutMs: number;
  clock: Clock;
  /** Hears the tool's `log` lines (progress); they are dropped when absent. */
  log?: (message: string, data?: unknown) => void;
}

/**
 * One time-limited attempt of a tool with already validated arguments: `run` gets a signal that fires on timeout or
 * cancel, and its output is checked against the output schema. Throws a FlowingError.
 */
export async function attemptTool(tool: AnyTool, args: unknown, options: ToolAttemptOptions): Promise<unknown> {
  const { timeoutMs } = options;
  const attempt = new Deadline(options.clock, { parent: options.deadline, timeoutMs, onTimeout: () => timeoutError(tool, timeoutMs) });
  try {
    const raw = await Promise.race([
      // The signal is read from the attempt when the tool asks for it (the runtime's attempts make it on demand).
      // A cancel that landed before this microtask never reaches the tool.
      Promise.resolve().then(() =>
        attempt.isAborted
          ? attempt.aborted
          : tool.run(args, {
              get signal() {
                return attempt.signal;
              },
              idempotencyKey: options.idempotencyKey,
              log: options.log ?? noLog,
            }),
      ),
      attempt.aborted,
    ]);
    const output = zodSchema(tool.output).safeParse(raw);
    if (!output.success) {
      throw new FlowingError(
        'TOOL_CONTRACT',
        `output of tool '${tool.name}' does not match its contract: ${formatIssues(output.error.issues)}`,
        { details: { side: 'output', issues: output.error.issues } },
      );
    }
    return output.data;
  } catch (error) {
    if (error instanceof FlowingError) throw error;
    const flow = toFlowError(error, 'TOOL_FAILED');
    throw new FlowingError(flow.code, flow.message, { details: flow.details, cause: error });
  } finally {
    attempt.dispose();
  }
}

function timeoutError(tool: AnyTool, timeoutMs: number): FlowingError {
  return new FlowingError('TOOL_TIMEOUT', `tool '${tool.name}' did not finish within ${timeoutMs} ms`);
}

function noLog() {}
