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
export function instrumentMachine(machine: AnyStateMachine, actors: Record<string, unknown>): AnyStateMachine {
  const { guards, actions, actors: ownActors, delays } = machine.implementations as unknown as Record<string, Record<string, unknown>>;
  const config = wrapNode(machine.config as Config, machine.config.id ?? machine.id);
  return createMachine(config as never, {
    actors: { ...ownActors, ...actors },
    delays,
    guards: mapValues(guards ?? {}, (guard, name) => (isPlainFunction(guard) ? guardWrapper(guard, `guard '${name}'`, true) : guard)),
    actions: mapValues(actions ?? {}, (action, name) => wrapAction(action, `action '${name}'`)),
  } as never);
}

function wrapNode(node: Config, path: string): Config {
  const copy: Config = { ...node };
  if (typeof node.context === 'function') copy.context = thrower(node.context as Fn, 'MACHINE_THREW', () => 'the initial context');
  if (node.on) copy.on = mapValues(node.on as Config, (t, event) => wrapTransitions(t, `${event} in state '${path}'`));
  if (node.always) copy.always = wrapTransitions(node.always, `the eventless transition of state '${path}'`);
  if (node.after) copy.after = mapValues(node.after as Config, (t, delay) => wrapTransitions(t, `after ${delay} in state '${path}'`));
  if (node.onDone) copy.onDone = wrapTransitions(node.onDone, `onDone of state '${path}'`);
  if (node.entry) copy.entry = wrapActions(node.entry, `entry of state '${path}'`);
  if (node.exit) copy.exit = wrapActions(node.exit, `exit of state '${path}'`);
  if (node.invoke) {
    const list = Array.isArray(node.invoke) ? node.invoke : [node.invoke];
    const wrapped = list.map((invoke: Config) => {
      const where = `invoke '${String(invoke.id ?? invoke.src)}' of state '${path}'`;
      const out: Config = { ...invoke };
      if (typeof invoke.input === 'function') out.input = thrower(invoke.input as Fn, 'MACHINE_THREW', () => `the input of ${where}`);
      for (const key of ['onDone', 'onError', 'onSnapshot'] as const) if (invoke[key]) out[key] = wrapTransitions(invoke[key], `${key} of ${where}`);
      return out;
    });
    copy.invoke = Array.isArray(node.invoke) ? wrapped : wrapped[0];
  }
  if (node.states) copy.states = mapValues(node.states as Config, (child, key) => wrapNode(child as Config, `${path}.${key}`));
  return copy;
}

function wrapTransitions(transitions: unknown, where: string): unknown {
  if (Array.isArray(transitions)) return transitions.map((t, i) => wrapTransition(t, transitions.length > 1 ? `${where} (branch ${i + 1})` : where));
  return wrapTransition(transitions, where);
}

function wrapTransition(transition: unknown, where: string): unknown {
  if (transition === null || typeof transition !== 'object') return transition;
  const t = transition as Config;
  const copy: Config = { ...t };
  if (isPlainFunction(t.guard)) copy.guard = guardWrapper(t.guard, `the guard of ${where}`, false);
  else if (hasParamsFunction(t.guard)) copy.guard = withParams(t.guard, 'GUARD_THREW', `the guard parameters of ${where}`);
  if (t.actions) copy.actions = wrapActions(t.actions, where);
  return copy;
}

function wrapActions(actions: unknown, where: string): unknown {
  if (Array.isArray(actions)) return actions.map((a) => wrapAction(a, `an action of ${where}`));
  return wrapAction(actions, `an action of ${where}`);
}

/** Plain functions are wrapped; `assign` gets wrapped assigners; other built-ins (raise, sendTo ...) stay as they are. */
function wrapAction(action: unknown, where: string): unknown {
  if (hasParamsFunction(action)) return withParams(action, 'ACTION_THREW', `the parameters of ${where}`);
  if (typeof action !== 'function') return action;
  const builtin = action as Fn & { type?: string; resolve?: unknown; assignment?: unknown };
  if (builtin.resolve === undefined) return thrower(builtin, 'ACTION_THREW', () => where);
  if (builtin.type !== 'xstate.assign') return action;
  const assignment = builtin.assignment;
  if (typeof assignment === 'function') return assign(thrower(assignment as Fn, 'ACTION_THREW', () => `the assignment of ${where}`) as never);
  if (assignment && typeof assignment === 'object') {
    return assign(mapValues(assignment as Config, (value, field) => (
      typeof value === 'function' ? thrower(value as Fn, 'ACTION_THREW', () => `the assignment of '${field}' in ${where}`) : value
    )) as never);
  }
  return action;
}

/** A `{ type, params }` reference whose params are computed (generated code passes `output`, `error`, `event`). */
function hasParamsFunction(value: unknown): value is { type: string; params: Fn } {
  return value !== null && typeof value === 'object' && typeof (value as { params?: unknown }).params === 'function';
}

function withParams(ref: { type: string; params: Fn }, code: ThrownCode, where: string): unknown {
  return { ...ref, params: thrower(ref.params, code, () => `${where} ('${ref.type}')`) };
}

/** A named guard does not know where it is used, so its place is completed with the event being processed. */
function guardWrapper(guard: Fn, where: string, named: boolean): Fn {
  return thrower(guard, 'GUARD_THREW', (args) => {
    const event = (args as { event?: { type?: unknown } } | undefined)?.event?.type;
    return named && typeof event === 'string' ? `${where} (on ${event})` : where;
  });
}

/**
 * The last coded throw. XState rewraps a guard's throw in a plain Error whose message ends with the original one, so
 * the code is found again here; the throw reaches the session's error observer synchronously, before any other.
 */
let lastThrow: FlowingError | undefined;

/** XState calls guards, actions, assigners, input mappings and context factories with (args, params) only. */
function thrower(fn: Fn, code: ThrownCode, where: (args: unknown) => string): Fn {
  return function instrumented(args: unknown, params: unknown) {
    try {
      return fn(args, params);
    } catch (error) {
      if (error instanceof FlowingError && isThrownCode(error.code)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const place = where(args);
      lastThrow = new FlowingError(code, `${place} threw: ${message}`, { cause: error, details: { where: place, thrown: message } });
      throw lastThrow;
    }
  };
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

/** A FlowError for anything the actor threw: our coded throws keep their code, anything else is MACHINE_THREW. */
export function thrownError(thrown: unknown): { code: string; message: string; details?: unknown } {
  const last = lastThrow;
  lastThrow = undefined;
  if (thrown instanceof FlowingError) return thrown.toJSON();
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  if (last && message.endsWith(last.message)) {
    const state = /in state node '([^']*)'/.exec(message)?.[1];
    const named = state === undefined || last.message.includes(`'${state}'`);
    return { code: last.code, message: named ? last.message : `${last.message} (in state '${state}')`, details: last.details };
  }
  return { code: 'MACHINE_THREW', message: `the machine threw: ${message}` };
}
