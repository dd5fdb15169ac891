// What `@flowing/runtime` resolves to in the bare XState cold-start process: the few names the generated machine and
// the tools import, as plain code a team would write for XState alone. `startBareXState` replaces the invoked
// actors with plain fromPromise actors calling the tools and the model, as in the in-process benchmark.
import { fromPromise } from 'xstate';

export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const defineTool = <T>(config: T): T => config;
export const defineMachine = <T>(config: T): T => config;

export function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function toFlowError(error: unknown): { code: string; message: string } {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return { code: typeof code === 'string' ? code : 'TOOL_FAILED', message: typeof message === 'string' ? message : String(error) };
}

const replaced = () =>
  fromPromise<never, unknown>(async () => {
    throw new Error('replaced by the plain actors of startBareXState');
  });
export const fromTool = replaced;
export const fromLlm = replaced;
