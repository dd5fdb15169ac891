/**
 * Limits of calls that the runtime enforces and the cost bound counts on: kept here, in the browser-safe spec
 * package, so that the runtime, codegen and the cost bound read one value.
 */

/** Repairs of a classify/extract answer after the first attempt (so at most 3 model requests). */
export const MAX_LLM_REPAIRS = 2;
/** Model turns of an `agent` call whose spec names no `maxIterations` (codegen writes it into the machine). */
export const DEFAULT_AGENT_ITERATIONS = 5;
/** Tool calls an agent may make per iteration, in total over the call (`maxIterations` times this). */
export const AGENT_TOOL_CALLS_PER_ITERATION = 4;
/** Retries of an idempotent tool whose definition names none (`defineTool({ retries })`). */
export const DEFAULT_TOOL_RETRIES = 2;
