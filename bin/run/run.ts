import { randomUUID } from 'node:crypto';
import {
  createRuntime,
  FlowingError,
  toFlowError,
  type AnyMachineDefinition,
  type LlmProvider,
  type RuntimeEvent,
  type Session,
  type SessionSnapshot,
} from '@flowing/runtime';
import { checkCaseName, recordCase } from '../test/record.ts';
import { readEventsFile } from './events-file.ts';
import { formatEvent } from './format.ts';
import { loadMachineTree } from './load.ts';
import { streamLines } from './output.ts';
import { chooseProvider } from './provider.ts';
import { openStore, type OpenedStore } from './store-option.ts';

export interface RunCommandOptions {
  message?: string;
  events?: string;
  /** The new session's input, a JSON object of context fields (a child session's input, a channel session's key). */
  input?: string;
  json?: boolean;
  /** `sqlite:PATH`, `redis://...` or `memory` (default). */
  store?: string;
  /** Continue this stored session instead of starting one (needs a durable `store`). */
  session?: string;
  /** Save the session as the regression case `machines/<id>/cases/<record>.case.jsonl`. */
  record?: string;
  /** Where lines go (default: process.stdout / process.stderr, a closed pipe ending output quietly). */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** How long printing may lag behind the store once the events are sent (a subscriber reads the store on its own). */
const PRINT_WAIT_MS = 5_000;

/**
 * `flowing run <machine>`: one headless session (new, or `--session` continued from a durable `--store`), printing each
 * event as it happens. Exit status: 0 when the session finished or waits for input and every event was applied;
 * 1 when any event was refused, or the session ended in error, needs attention or was cancelled; 2 on a usage error
 * (unknown machine, unreadable events file, bad --store, unknown --session).
 */
export async function runCommand(machineId: string, options: RunCommandOptions = {}): Promise<number> {
  const out = options.out ?? defaultOut();
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const report = (error: unknown, code: string) => {
    const flow = toFlowError(error, code);
    err(`error ${flow.code}: ${flow.message}`);
  };
  let definition: AnyMachineDefinition;
  let reachable: AnyMachineDefinition[];
  let events: Array<{ type: string } & Record<string, unknown>> = [];
  let llm: LlmProvider;
  let opened: OpenedStore;
  let input: Record<string, unknown> | undefined;
  try {
    reachable = await loadMachineTree(machineId);
    definition = reachable[0]!;
    if (options.record !== undefined) checkCaseName(options.record);
    if (options.events !== undefined) events = await readEventsFile(options.events);
    if (options.input !== undefined) input = parseInput(options.input);
    llm = await chooseProvider();
    opened = await openStore(options.store);
    if (options.session !== undefined && !opened.durable) {
      await opened.close();
      throw new FlowingError(
        'RUN_BAD_STORE',
        '--session continues a stored session: name its store with --store sqlite:PATH or --store redis://...',
      );
    }
  } catch (error) {
    report(error, 'RUN_FAILED');
    return 2;
  }
  if (options.message !== undefined) events.unshift({ type: 'USER_MESSAGE', text: options.message });

  try {
    const runtime = createRuntime({ machines: reachable, store: opened.store, llm });
    const printer = createPrinter(options.json === true, out);
    let session: Session;
    if (options.session !== undefined) {
      const continued = await continueSession(runtime, definition, options.session, printer, err);
      if (typeof continued === 'number') return continued;
      session = continued;
    } else {
      // Subscribed before it exists, so even a session that fails while starting shows its events.
      const sessionId = randomUUID();
      printer.follow(runtime.session(sessionId), 0);
      try {
        session = await runtime.createSession(definition, input, { sessionId });
      } catch (error) {
        await printer.drain(await storedSeq(runtime.session(sessionId)), err);
        report(error, 'RUN_FAILED');
        return 1;
      }
    }
    let refused = 0;
    let firstRefusal = '';
    for (const [i, event] of events.entries()) {
      const result = await session.send(event);
      if (!result.applied) {
        refused++;
        firstRefusal ||= `event ${i + 1} (${event.type}): ${result.code} ${result.message}`;
      }
    }
    const snapshot = await session.snapshot();
    await printer.drain(snapshot.seq, err);
    if (!options.json) out(`session ${snapshot.sessionId} ${snapshot.status}`);
    if (options.record !== undefined)
      err(`recorded case ${await recordCase(definition.id, options.record, await session.events(), snapshot)}`);
    if (refused > 0) err(`error RUN_EVENTS_REFUSED: ${refused} of ${events.length} events were refused; first: ${firstRefusal}`);
    if (snapshot.error && (snapshot.status === 'error' || snapshot.status === 'needs_attention'))
      err(`error ${snapshot.error.code}: ${snapshot.error.message}`);
    return refused === 0 && isFine(snapshot) ? 0 : 1;
  } catch (error) {
    report(error, 'RUN_FAILED');
    return 1;
  } finally {
    await opened.close();
  }
}

/** `--input`: a JSON object, or RUN_BAD_INPUT (its fields are checked against the context when the session starts). */
function parseInput(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FlowingError('RUN_BAD_INPUT', `--input is not JSON: ${(error as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new FlowingError('RUN_BAD_INPUT', '--input must be a JSON object of context fields, e.g. {"orderId": "A1002"}');
  return value as Record<string, unknown>;
}

/** Resumes a stored session (calls in flight finish from the journal) and prints what happens from now on. */
async function continueSession(
  runtime: ReturnType<typeof createRuntime>,
  definition: AnyMachineDefinition,
  sessionId: string,
  printer: Printer,
  err: (line: string) => void,
): Promise<Session | number> {
  let before: SessionSnapshot;
  try {
    before = await runtime.session(sessionId).snapshot();
  } catch (error) {
    err(`error ${toFlowError(error, 'RUN_FAILED').code}: ${(error as Error).message}`);
    return 2;
  }
  if (before.machineId !== definition.id) {
    err(`error RUN_BAD_SESSION: session '${sessionId}' runs machine '${before.machineId}', not '${definition.id}'`);
    return 2;
  }
  printer.follow(runtime.session(sessionId), before.seq);
  return runtime.resume(sessionId);
}

function isFine(snapshot: SessionSnapshot): boolean {
  return snapshot.status === 'waiting' || snapshot.status === 'done' || snapshot.status === 'running';
}

async function storedSeq(session: Session): Promise<number> {
  try {
    return (await session.snapshot()).seq;
  } catch {
    return 0; // nothing was stored
  }
}

interface Printer {
  follow(session: Session, fromSeq: number): void;
  /** Waits until every event up to `seq` is printed (bounded), then stops following. */
  drain(seq: number, err: (line: string) => void): Promise<void>;
}

function createPrinter(json: boolean, out: (line: string) => void): Printer {
  let printed = 0;
  let unsubscribe: (() => void) | undefined;
  let failure: string | undefined;
  let waiter: (() => void) | undefined;
  let target = Number.POSITIVE_INFINITY;
  return {
    follow(session, fromSeq) {
      printed = fromSeq;
      unsubscribe = session.subscribe(
        fromSeq,
        (event: RuntimeEvent) => {
          printed = event.seq;
          out(json ? JSON.stringify(event) : formatEvent(event));
          if (printed >= target) waiter?.();
        },
        (error) => {
          failure = `${error.code}: ${error.message}`;
          waiter?.();
        },
      );
    },
    async drain(seq, err) {
      target = seq;
      if (printed < seq && failure === undefined) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          waiter = resolve;
          timer = setTimeout(resolve, PRINT_WAIT_MS);
        });
        clearTimeout(timer);
      }
      unsubscribe?.();
      if (failure !== undefined) err(`error ${failure}`);
      else if (printed < seq)
        err(
          `error RUN_FAILED: events after seq ${printed} of ${seq} were not delivered within ${PRINT_WAIT_MS} ms; read them from the store`,
        );
    },
  };
}

function defaultOut(): (line: string) => void {
  const writer = streamLines(process.stdout);
  return (line) => writer.write(line);
}
