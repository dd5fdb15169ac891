import type { z } from 'zod';
import { FlowingError } from './errors.ts';

export type ToolRisk = 'low' | 'medium' | 'high';

/** What `run` receives besides its input. */
export interface ToolRunContext {
  /** Fires on timeout or cancel; pass it to fetch and friends. */
  signal: AbortSignal;
  /** Stable across retries and resumes of the same call; send it to services that deduplicate. */
  idempotencyKey: string;
  log: (message: string, data?: unknown) => void;
}

export interface ToolConfig<TInput extends z.ZodType, TOutput extends z.ZodType> {
  /** snake_case; the file is tools/<name>.ts. */
  name: string;
  description: string;
  input: TInput;
  output: TOutput;
  /** Default 30 000 ms. */
  timeoutMs?: number;
  /** Extra attempts after a failure, only used when the tool is idempotent or the call has an idempotency key. Default 2. */
  retries?: number;
  /** True when calling twice with the same input has the effect of calling once. Default false. */
  idempotent?: boolean;
  /** `high` tools run only after an approval. Default `low`. */
  risk?: ToolRisk;
  /** Error codes the tool may throw, code -> when. */
  errors?: Record<string, string>;
  run: (input: z.output<TInput>, context: ToolRunContext) => Promise<z.input<TOutput>>;
}

export interface Tool<TInput extends z.ZodType = z.ZodType, TOutput extends z.ZodType = z.ZodType>
  extends Readonly<Required<Omit<ToolConfig<TInput, TOutput>, 'errors'>>> {
  readonly errors: Readonly<Record<string, string>>;
}

export type AnyTool = Tool<z.ZodType, z.ZodType>;
export type ToolInput<T extends AnyTool> = z.input<T['input']>;
export type ToolOutput<T extends AnyTool> = z.output<T['output']>;

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export const DEFAULT_TOOL_RETRIES = 2;

/**
 * Declares a tool contract.
 * @example
 * export const queryOrder = defineTool({
 *   name: 'query_order', description: 'Looks up an order', idempotent: true,
 *   input: z.object({ order_id: z.string() }), output: z.object({ status: z.string() }),
 *   errors: { ORDER_NOT_FOUND: 'no such order' },
 *   async run({ order_id }, { signal }) { ... },
 * });
 */
export function defineTool<TInput extends z.ZodType, TOutput extends z.ZodType>(
  config: ToolConfig<TInput, TOutput>,
): Tool<TInput, TOutput> {
  if (!/^[a-z][a-z0-9_]*$/.test(config.name)) {
    throw new FlowingError('TOOL_CONTRACT', `tool name ${JSON.stringify(config.name)} must be snake_case (a-z, 0-9, _)`);
  }
  return Object.freeze({
    name: config.name,
    description: config.description,
    input: config.input,
    output: config.output,
    timeoutMs: config.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    retries: config.retries ?? DEFAULT_TOOL_RETRIES,
    idempotent: config.idempotent ?? false,
    risk: config.risk ?? 'low',
    errors: Object.freeze({ ...(config.errors ?? {}) }),
    run: config.run,
  });
}

/** Thrown by a tool's `run` to fail with one of its declared codes. */
export class ToolError extends FlowingError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, { details });
    this.name = 'ToolError';
  }
}
