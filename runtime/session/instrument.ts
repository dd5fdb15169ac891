import { assign, createMachine, type AnyStateMachine } from 'xstate';
import { FlowingError } from '../errors.ts';

/** Codes of a throw inside the machine, by what threw. */
export type ThrownCode = 'GUARD_THREW' | 'ACTION_THREW' | 'MACHINE_THREW';

type Fn = (...args: unknown[]) => unknown;
type Config = Record<string, unknown>;

/**
 * A copy of the machine whose guards, actions, assignments, invoke inputs and context factory turn a throw into a
 * FlowingError coded GUARD_THREW, ACTION_THREW or MACHINE_THREW, carrying the thrown message and naming the place.
 * XState reports a throw only as an `error` snapshot with the raw value; without this a throwing guard looked like a
 * false one (issue 8). `actors` replace the machine's actors of the same name.
 */
export function instrumentMachine(machine: AnyStateMachine, actors: Record<string, unknown>): InstrumentedMachine {
  const { guards, actions, actors: ownActors, delays } = machine.implementations as unknown as Record<string, Record<string, unknown>>;
  const throws = new ThrowRecorder();
  const w = new Wrapper(throws);
  const config = w.node(machine.config as Config, machine.config.id ?? machine.id);
  const instrumented = createMachine(
    config as never,
    {
      actors: { ...ownActors, ...actors },
      delays,
      guards: mapValues(guards ?? {}, (guard, name) => (isPlainFunction(guard) ? w.guard(guard, `guard '${name}'`) : guard)),
      actions: mapValues(actions ?? {}, (action, name) => w.action(action, `action '${name}'`)),
    } as never,
  );
  return { machine: instrumented, throws };
}

/** The instrumented machine and where its coded throws are recorded. */
export interface InstrumentedMachine {
  machine: AnyStateMachine;
  throws: ThrowRecorder;
}

/**
 * The last coded throw of a machine's guards and actions. XState rewraps a guard's throw in a plain Error without
 * a cause, so the code is kept here: the throw reaches the session's error observer synchronously, before anything
 * else can run, and the session takes it from here (`take`) right then.
 */
export class ThrowRecorder {
  private last?: FlowingError;

  record(error: FlowingError): void {
    this.last = error;
  }

  /** The throw recorded since the last take, if any (the session clears it before it applies an event). */
  take(): FlowingError | undefined {
    const last = this.last;
    this.last = undefined;
    return last;
  }
}

/** Wraps the functions of a machine config so that a throw becomes a coded FlowingError recorded in `throws`. */
class Wrapper {
  constructor(private readonly throws: ThrowRecorder) {}

  node(node: Config, path: string): Config {
    const copy: Config = { ...node };
    if (typeof node.context === 'function') copy.context = this.thrower(node.context as Fn, 'MACHINE_THREW', () => 'the initial context');
    if (node.on) copy.on = mapValues(node.on as Config, (t, event) => this.transitions(t, `${event} in state '${path}'`));
    if (node.always) copy.always = this.transitions(node.always, `the eventless transition of state '${path}'`);
    if (node.after) copy.after = mapValues(node.after as Config, (t, delay) => this.transitions(t, `after ${delay} in state '${path}'`));
    if (node.onDone) copy.onDone = this.transitions(node.onDone, `onDone of state '${path}'`);
    if (node.entry) copy.entry = this.actions(node.entry, `entry of state '${path}'`);
    if (node.exit) copy.exit = this.actions(node.exit, `exit of state '${path}'`);
    if (node.invoke) {
      const list = Array.isArray(node.invoke) ? node.invoke : [node.invoke];
      const wrapped = list.map((invoke: Config) => {
        const where = `invoke '${String(invoke.id ?? invoke.src)}' of state '${path}'`;
        const out: Config = { ...invoke };
        if (typeof invoke.input === 'function')
          out.input = this.thrower(invoke.input as Fn, 'MACHINE_THREW', () => `the input of ${where}`);
        for (const key of ['onDone', 'onError', 'onSnapshot'] as const)
          if (invoke[key]) out[key] = this.transitions(invoke[key], `${key} of ${where}`);
        return out;
      });
      copy.invoke = Array.isArray(node.invoke) ? wrapped : wrapped[0];
    }
    if (node.states) copy.states = mapValues(node.states as Config, (child, key) => this.node(child as Config, `${path}.${key}`));
    return copy;
  }

  /** A named guard does not know where it is used: its place is completed with the event being processed. */
  guard(guard: Fn, where: string): Fn {
    return this.thrower(guard, 'GUARD_THREW', (args) => {
      const event = (args as { event?: { type?: unknown } } | undefined)?.event?.type;
      return typeof event === 'string' ? `${where} (on ${event})` : where;
    });
  }

  /** Plain functions are wrapped; `assign` gets wrapped assigners; other built-ins (raise, sendTo ...) stay as they are. */
  action(action: unknown, where: string): unknown {
    if (hasParamsFunction(action)) return this.withParams(action, 'ACTION_THREW', `the parameters of ${where}`);
    if (typeof action !== 'function') return action;
    const builtin = action as Fn & { type?: string; resolve?: unknown; assignment?: unknown };
    if (builtin.resolve === undefined) return this.thrower(builtin, 'ACTION_THREW', () => where);
    if (builtin.type !== 'xstate.assign') return action;
    const assignment = builtin.assignment;
    if (typeof assignment === 'function')
      return assign(this.thrower(assignment as Fn, 'ACTION_THREW', () => `the assignment of ${where}`) as never);
    if (assignment && typeof assignment === 'object') {
      return assign(
        mapValues(assignment as Config, (value, field) =>
          typeof value === 'function' ? this.thrower(value as Fn, 'ACTION_THREW', () => `the assignment of '${field}' in ${where}`) : value,
        ) as never,
      );
    }
    return action;
  }

  private transitions(transitions: unknown, where: string): unknown {
    if (Array.isArray(transitions))
      return transitions.map((t, i) => this.transition(t, transitions.length > 1 ? `${where} (branch ${i + 1})` : where));
    return this.transition(transitions, where);
  }

  private transition(transition: unknown, where: string): unknown {
    if (transition === null || typeof transition !== 'object') return transition;
    const t = transition as Config;
    const copy: Config = { ...t };
    if (isPlainFunction(t.guard)) copy.guard = this.thrower(t.guard, 'GUARD_THREW', () => `the guard of ${where}`);
    else if (hasParamsFunction(t.guard)) copy.guard = this.withParams(t.guard, 'GUARD_THREW', `the guard parameters of ${where}`);
    if (t.actions) copy.actions = this.actions(t.actions, where);
    return copy;
  }

  private actions(actions: unknown, where: string): unknown {
    if (Array.isArray(actions)) return actions.map((a) => this.action(a, `an action of ${where}`));
    return this.action(actions, `an action of ${where}`);
  }

  private withParams(ref: { type: string; params: Fn }, code: ThrownCode, where: string): unknown {
    return { ...ref, params: this.thrower(ref.params, code, () => `${where} ('${ref.type}')`) };
  }

  /** XState calls guards, actions, assigners, input mappings and context factories with (args, params) only. */
  private thrower(fn: Fn, code: ThrownCode, where: (args: unknown) => string): Fn {
    const throws = this.throws;
    return function instrumented(args: unknown, params: unknown) {
      try {
        return fn(args, params);
      } catch (error) {
        if (error instanceof FlowingError && isThrownCode(error.code)) throw error;
        const message = error instanceof Error ? error.message : String(error);
        const place = where(args);
        const coded = new FlowingError(code, `${place} threw: ${message}`, { cause: error, details: { where: place, thrown: message } });
        throws.record(coded);
        throw coded;
      }
    };
  }
}

/** A `{ type, params }` reference whose params are computed (generated code passes `output`, `error`, `event`). */
function hasParamsFunction(value: unknown): value is { type: string; params: Fn } {
  return value !== null && typeof value === 'object' && typeof (value as { params?: unknown }).params === 'function';
}

function isThrownCode(code: string): code is ThrownCode {
  return code === 'GUARD_THREW' || code === 'ACTION_THREW' || code === 'MACHINE_THREW';
}

/** True for a guard or action written as a function (not one of XState's built-in guard or action objects). */
function isPlainFunction(value: unknown): value is Fn {
  return typeof value === 'function' && !('check' in value) && !('resolve' in value);
}

function mapValues(record: Config, fn: (value: unknown, key: string) => unknown): Config {
  const out: Config = {};
  for (const key of Object.keys(record)) out[key] = fn(record[key], key);
  return out;
}

/**
 * A FlowError for anything the actor threw: our coded throws keep their code (the recorder holds the one XState
 * rewrapped), anything else is MACHINE_THREW. `states` (the ids of the active state nodes) names where the machine
 * was, for named guards and actions, which do not know it themselves.
 */
export function thrownError(
  thrown: unknown,
  recorded: FlowingError | undefined,
  states: readonly string[],
): { code: string; message: string; details?: unknown } {
  if (thrown instanceof FlowingError) return thrown.toJSON();
  if (recorded) {
    const named = states.length === 0 || states.some((state) => recorded.message.includes(`'${state}'`));
    return {
      code: recorded.code,
      message: named ? recorded.message : `${recorded.message} (in state '${states.join("', '")}')`,
      details: recorded.details,
    };
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { code: 'MACHINE_THREW', message: `the machine threw: ${message}` };
}
