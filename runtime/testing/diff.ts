import { stableJson } from '../session/approvals.ts';
import type { CaseExpectation, CaseStep, RecordedCall } from './case-file.ts';
import type { Observation } from './observe.ts';
import type { MissingCall } from './case-calls.ts';

/** Old (recorded) and new (replayed) side of one aspect of a session. */
export interface Sides<T> {
  old: T;
  new: T;
}

/** What differs between a case's expectation and a replay of it. */
export interface CaseDiff {
  ok: boolean;
  /** The first difference in time order, in one sentence. */
  first?: string;
  /** Index of the first differing step of the timeline (absent when the timelines agree). */
  firstStep?: number;
  states: Sides<string[]>;
  toolCalls: Sides<Array<{ tool: string; input: unknown }>>;
  modelCalls: Sides<Array<{ model: string; output?: unknown }>>;
  replies: Sides<string[]>;
  status: Sides<string>;
  /** The expected context keys whose values differ. */
  context: Array<{ key: string; old: unknown; new: unknown }>;
  missing: MissingCall[];
  unused: RecordedCall[];
  /** When the state paths differ only by state names: old name -> new name. */
  renamed?: Record<string, string>;
}

/** Compares what a case expects with what its replay did. */
export function diffCase(
  expect: CaseExpectation,
  observed: Observation,
  missing: readonly MissingCall[],
  unused: readonly RecordedCall[],
): CaseDiff {
  const pick = <T>(steps: CaseStep[], f: (s: CaseStep) => T | undefined) => steps.map(f).filter((x): x is T => x !== undefined);
  const sides = <T>(f: (s: CaseStep) => T | undefined): Sides<T[]> => ({ old: pick(expect.steps, f), new: pick(observed.steps, f) });
  const states = sides((s) => ('state' in s ? s.state : undefined));
  const toolCalls = sides((s) => ('tool' in s ? { tool: s.tool, input: s.input } : undefined));
  const modelCalls = sides((s) => ('model' in s ? { model: s.model, output: s.output } : undefined));
  const replies = sides((s) => ('reply' in s ? s.reply : undefined));
  const context: CaseDiff['context'] = [];
  for (const key of Object.keys(expect.context)) {
    if (stableJson(expect.context[key]) !== stableJson(observed.context[key]))
      context.push({ key, old: expect.context[key], new: observed.context[key] });
  }
  const firstStep = firstDifference(expect.steps, observed.steps);
  const status = { old: expect.status, new: observed.status };
  let first: string | undefined;
  if (missing.length > 0) {
    const call = missing[0]!;
    first = `the new machine calls ${call.call === 'tool' ? `tool '${call.name}'` : `the model (${call.name})`}${call.input === undefined ? '' : ` with ${stableJson(call.input)}`}; the recording has no result for it (the call was not made)`;
  } else if (firstStep !== undefined) {
    first = `step ${firstStep + 1}: recorded ${describe(expect.steps[firstStep])}, now ${describe(observed.steps[firstStep])}`;
  } else if (status.old !== status.new) {
    first = `final status: recorded ${status.old}, now ${status.new}`;
  } else if (context.length > 0) {
    first = `final context.${context[0]!.key}: recorded ${shown(context[0]!.old)}, now ${shown(context[0]!.new)}`;
  } else if (unused.length > 0) {
    first = `the recording has a result of ${unused[0]!.call === 'tool' ? `tool '${unused[0]!.name}'` : `a ${unused[0]!.name} model call`} the new machine never asked for`;
  }
  const diff: CaseDiff = {
    ok: first === undefined,
    first,
    firstStep,
    states,
    toolCalls,
    modelCalls,
    replies,
    status,
    context,
    missing: [...missing],
    unused: [...unused],
  };
  const renamed = renamesOnly(diff);
  if (renamed) diff.renamed = renamed;
  return diff;
}

/** A value in a message: JSON, or `undefined` for an absent one. */
export function shown(value: unknown): string {
  return value === undefined ? 'undefined' : stableJson(value);
}

function firstDifference(a: readonly CaseStep[], b: readonly CaseStep[]): number | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (stableJson(a[i] ?? null) !== stableJson(b[i] ?? null)) return i;
  return undefined;
}

/** One step in words. */
export function describe(step: CaseStep | undefined): string {
  if (!step) return 'nothing (the session had stopped)';
  if ('state' in step) return `state ${step.state}`;
  if ('rejected' in step) return `${step.rejected} refused (${step.code})`;
  if ('tool' in step) return `tool ${step.tool} ${stableJson(step.input)}`;
  if ('model' in step) return `model ${step.model} -> ${stableJson(step.output)}`;
  return `reply ${JSON.stringify(step.reply)}`;
}

/**
 * The old -> new state names, when everything but the names of states agrees: same number of states, each pair of
 * labels equal segment by segment up to one consistent renaming, and calls, replies, status and context unchanged.
 */
function renamesOnly(diff: CaseDiff): Record<string, string> | undefined {
  const { old, new: now } = diff.states;
  if (
    old.length !== now.length ||
    diff.missing.length > 0 ||
    diff.unused.length > 0 ||
    diff.context.length > 0 ||
    diff.status.old !== diff.status.new
  )
    return undefined;
  for (const key of ['toolCalls', 'modelCalls', 'replies'] as const)
    if (stableJson(diff[key].old) !== stableJson(diff[key].new)) return undefined;
  const map = new Map<string, string>();
  const back = new Map<string, string>();
  for (let i = 0; i < old.length; i++) {
    const a = old[i]!.split(/([.{},\s]+)/);
    const b = now[i]!.split(/([.{},\s]+)/);
    if (a.length !== b.length) return undefined;
    for (let j = 0; j < a.length; j++) {
      if (a[j] === b[j]) continue;
      if ((map.get(a[j]!) ?? b[j]) !== b[j] || (back.get(b[j]!) ?? a[j]) !== a[j]) return undefined;
      map.set(a[j]!, b[j]!);
      back.set(b[j]!, a[j]!);
    }
  }
  return map.size > 0 ? Object.fromEntries(map) : undefined;
}
