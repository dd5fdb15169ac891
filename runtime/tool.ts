import type { z } from 'zod';
import { DEFAULT_TOOL_RETRIES } from '@flowing/spec';
import { FlowingError, formatIssues } from './errors.ts';

export type ToolRisk = 'low' | 'medium' | 'high';

/** What `run` receives besides its input. */
export interface ToolRunContext {
  /** Fires on timeout or cancel; pass it to fetch and friends. */
  signal: AbortSignal;
  /** Stable across retries and resumes of the same call; send it to services that deduplicate. */
  idempotencyKey: string;
  log: (message: string, data?: unknown) => void;
}

/**
 * A zod schema as the tool types read it: only its inferred types. Constraining by `z.ZodType` instead makes the
 * type checker relate every user schema to zod's class hierarchy (variance of each wrapper type), which dominated
 * the type check of generated machines.
 */
export interface ToolSchema {
  readonly _zod: { readonly input: unknown; readonly output: unknown };
}

/** The zod schema behind a tool's `input` or `output`; `defineTool`'s callers pass zod schemas. */
export function zodSchema(schema: ToolSchema): z.ZodType {
  return schema as z.ZodType;
}

export interface ToolConfig<TInput extends ToolSchema, TOutput extends ToolSchema> {
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
  /**
   * Inputs with the output the tool gives for them; `flowing test` answers the tool's calls with these in path tests
   * (never calling `run`). Checked against `input` and `output` when the tool is defined.
   */
  examples?: ReadonlyArray<ToolExample<z.input<TInput>, z.input<TOutput>>>;
  /** Inputs the tool fails for, with the error; the code is one of `errors` (or TOOL_FAILED / TOOL_TIMEOUT). */
  errorExamples?: ReadonlyArray<ToolErrorExample<z.input<TInput>>>;
  run: (input: z.output<TInput>, context: ToolRunContext) => Promise<z.input<TOutput>>;
}

/** One declared input and the output the tool answers it with. */
export interface ToolExample<TIn = unknown, TOut = unknown> {
  input: TIn;
  output: TOut;
}

/** One declared input and the coded error the tool fails it with. */
export interface ToolErrorExample<TIn = unknown> {
  input: TIn;
  error: { code: string; message: string };
}

export interface Tool<TInput extends ToolSchema = z.ZodType, TOutput extends ToolSchema = z.ZodType>
  extends Readonly<Required<Omit<ToolConfig<TInput, TOutput>, 'errors' | 'examples' | 'errorExamples'>>> {
  readonly errors: Readonly<Record<string, string>>;
  readonly examples: ReadonlyArray<ToolExample<z.input<TInput>, z.output<TOutput>>>;
  readonly errorExamples: ReadonlyArray<ToolErrorExample<z.input<TInput>>>;
}

export type AnyTool = Tool<ToolSchema, ToolSchema>;
export type ToolInput<T extends AnyTool> = z.input<T['input']>;
export type ToolOutput<T extends AnyTool> = z.output<T['output']>;

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export { DEFAULT_TOOL_RETRIES };

/**
 * Declares a tool contract.
 * @example
 * export const queryOrder = defineTool({
 *   name: 'query_order', description: 'Looks up an order', idempotent: true,
 *   input: z.object({ order_id: z.string() }), output: z.object({ status: z.string() }),
 *   errors: { ORDER_NOT_FOUND: 'no such order' },
 *   examples: [{ input: { order_id: 'A1' }, output: { status: 'shipped' } }],
 *   errorExamples: [{ input: { order_id: 'Z9' }, error: { code: 'ORDER_NOT_FOUND', message: 'no order Z9' } }],
 *   async run({ order_id }, { signal }) { ... },
 * });
 */
export function defineTool<TInput extends ToolSchema, TOutput extends ToolSchema>(
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
    examples: checkExamples(config),
    errorExamples: checkErrorExamples(config),
    run: config.run,
  });
}

/** Codes any tool call can fail with besides the tool's own. */
const RUNTIME_TOOL_CODES = new Set(['TOOL_FAILED', 'TOOL_TIMEOUT']);

function checkExamples<TInput extends ToolSchema, TOutput extends ToolSchema>(
  config: ToolConfig<TInput, TOutput>,
): ReadonlyArray<ToolExample<z.input<TInput>, z.output<TOutput>>> {
  return Object.freeze(
    (config.examples ?? []).map((example, i) => {
      const where = `tool '${config.name}' examples[${i}]`;
      checkAgainst(zodSchema(config.input), example?.input, `${where}.input`);
      const output = checkAgainst(zodSchema(config.output), example?.output, `${where}.output`);
      return Object.freeze({ input: example.input, output: output as z.output<TOutput> });
    }),
  );
}

function checkErrorExamples<TInput extends ToolSchema, TOutput extends ToolSchema>(
  config: ToolConfig<TInput, TOutput>,
): ReadonlyArray<ToolErrorExample<z.input<TInput>>> {
  return Object.freeze(
    (config.errorExamples ?? []).map((example, i) => {
      const where = `tool '${config.name}' errorExamples[${i}]`;
      checkAgainst(zodSchema(config.input), example?.input, `${where}.input`);
      const { code, message } = example.error ?? {};
      if (typeof code !== 'string' || typeof message !== 'string') {
        throw new FlowingError('TOOL_EXAMPLE_INVALID', `${where}.error must be { code, message } with string values`);
      }
      if (!RUNTIME_TOOL_CODES.has(code) && !Object.hasOwn(config.errors ?? {}, code)) {
        const declared = Object.keys(config.errors ?? {});
        throw new FlowingError(
          'TOOL_EXAMPLE_INVALID',
          `${where}.error.code '${code}' is not declared in the tool's errors (declared: ${declared.join(', ') || 'none'}; TOOL_FAILED and TOOL_TIMEOUT are always allowed)`,
        );
      }
      return Object.freeze({ input: example.input, error: Object.freeze({ code, message }) });
    }),
  );
}

function checkAgainst(schema: z.ZodType, value: unknown, where: string): unknown {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new FlowingError('TOOL_EXAMPLE_INVALID', `${where} does not match the tool's schema: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Thrown by a tool's `run` to fail with one of its declared codes. */
export class ToolError extends FlowingError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, { details });
    this.name = 'ToolError';
  }
}
