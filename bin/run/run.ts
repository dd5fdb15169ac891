import { FlowingError, createMemoryStore, createRuntime, createScriptedProvider, toFlowError, type LlmProvider, type RuntimeEvent } from '@flowing/runtime';
import { readEventsFile } from './events-file.ts';
import { formatEvent } from './format.ts';
import { loadMachine } from './load.ts';

export interface RunCommandOptions {
  message?: string;
  events?: string;
  json?: boolean;
  /** Where lines go (default: process.stdout / process.stderr). */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/**
 * `flowing run <machine>`: one headless session on the memory store, printing each event as it happens.
 * Exit code 0 when the session finished or waits for input, 1 on a session error, 2 on a usage error.
 */
export async function runCommand(machineId: string, options: RunCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const usage = (error: unknown) => {
    const flow = toFlowError(error, 'RUN_FAILED');
    err(`error ${flow.code}: ${flow.message}`);
    return 2;
  };
  let definition;
  let events: Array<{ type: string } & Record<string, unknown>> = [];
  let llm: LlmProvider;
  try {
    definition = await loadMachine(machineId);
    if (options.events !== undefined) events = await readEventsFile(options.events);
    llm = await chooseProvider();
  } catch (error) {
    return usage(error);
  }
  if (options.message !== undefined) events.unshift({ type: 'USER_MESSAGE', text: options.message });

  const runtime = createRuntime({ machines: [definition], store: createMemoryStore(), llm });
  let printed = 0;
  const print = (event: RuntimeEvent) => {
    printed = event.seq;
    out(options.json ? JSON.stringify(event) : formatEvent(event));
  };
  const session = await runtime.createSession(definition, undefined);
  const unsubscribe = session.subscribe(0, print);
  for (const event of events) await session.send(event);
  const snapshot = await session.snapshot();
  // Subscribers catch up from the store asynchronously; wait until the last event is printed.
  for (let i = 0; i < 1000 && printed < snapshot.seq; i++) await new Promise((resolve) => setImmediate(resolve));
  unsubscribe();
  if (!options.json) out(`session ${snapshot.sessionId} ${snapshot.status}`);
  return snapshot.status === 'waiting' || snapshot.status === 'done' || snapshot.status === 'running' ? 0 : 1;
}

async function chooseProvider(): Promise<LlmProvider> {
  if (!process.env.OPENAI_BASE_URL) return createScriptedProvider();
  const path = '@flowing/runtime/openai';
  let module: { createOpenAIProvider?: (options?: Record<string, unknown>) => LlmProvider };
  try {
    module = (await import(path)) as typeof module;
  } catch (error) {
    throw new FlowingError('LLM_NOT_CONFIGURED', `OPENAI_BASE_URL is set, but the OpenAI provider could not be loaded: ${(error as Error).message}`);
  }
  if (typeof module.createOpenAIProvider !== 'function') {
    throw new FlowingError('LLM_NOT_CONFIGURED', '@flowing/runtime/openai does not export createOpenAIProvider');
  }
  return module.createOpenAIProvider({});
}
