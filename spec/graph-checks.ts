import type { problem } from './problems.ts';
import type { FlowSpec } from './schema.ts';
import type { ToolInfo } from './validate.ts';
import { transitionSites, type StateEntry } from './walk.ts';

/** How the validator records a finding: a code, JSON pointer segments and a message. */
export type Report = (code: Parameters<typeof problem>[0], segments: Array<string | number>, message: string) => void;

/** Reachability, dead ends and approval gating: the checks that need the whole graph. */
export function checkGraph(
  spec: FlowSpec,
  states: StateEntry[],
  byName: Map<string, StateEntry>,
  tools: Record<string, ToolInfo> | undefined,
  report: Report,
): void {
  const reachable = new Set<StateEntry>();
  const queue: StateEntry[] = [];
  const enter = (entry: StateEntry | undefined) => {
    for (let cursor = entry; cursor; cursor = cursor.parent) {
      if (reachable.has(cursor)) break;
      reachable.add(cursor);
      queue.push(cursor);
    }
  };
  const childrenOf = (entry: StateEntry) => states.filter((s) => s.parent === entry);
  if (spec.initial) enter(states.find((s) => !s.parent && s.name === spec.initial));
  while (queue.length > 0) {
    const entry = queue.shift()!;
    if (entry.type === 'compound' && entry.spec.initial) enter(childrenOf(entry).find((c) => c.name === entry.spec.initial));
    if (entry.type === 'parallel') childrenOf(entry).forEach(enter);
    for (const site of transitionSites(entry.spec)) {
      for (const { transition } of site.transitions) if (transition.target) enter(byName.get(transition.target));
    }
  }
  const initialResolves = reachable.size > 0;
  for (const entry of states) {
    if (initialResolves && byName.get(entry.name) === entry && !reachable.has(entry)) {
      report('SPEC_UNREACHABLE_STATE', entry.pointer, `state '${entry.name}' cannot be reached from the initial state`);
    }
  }

  const hasWayOut = (entry: StateEntry): boolean => {
    for (let cursor: StateEntry | undefined = entry; cursor; cursor = cursor.parent) {
      const s = cursor.spec;
      if (s.invoke || Object.keys(s.on ?? {}).length > 0 || Object.keys(s.after ?? {}).length > 0 || s.always !== undefined) return true;
    }
    return false;
  };
  for (const entry of states) {
    if (entry.type === 'atomic' && !hasWayOut(entry)) {
      report('SPEC_DEAD_END', entry.pointer, `state '${entry.name}' is not final and has no way out; add a transition or make it final`);
    }
  }

  // A high-risk tool runs only in a state that every incoming transition enters on APPROVE.
  if (!tools) return;
  checkApprovalTargets(states, byName, tools, report);
  for (const entry of states) {
    const invoke = entry.spec.invoke;
    if (!invoke || !('tool' in invoke) || !Object.hasOwn(tools, invoke.tool) || tools[invoke.tool]!.risk !== 'high') continue;
    const isInitial = entry.parent ? entry.parent.spec.initial === entry.name : spec.initial === entry.name;
    if (isInitial) {
      report(
        'SPEC_RISKY_TOOL_NOT_APPROVED',
        [...entry.pointer, 'invoke', 'tool'],
        `state '${entry.name}' runs high-risk tool '${invoke.tool}' but is an initial state; enter it only through an APPROVE transition`,
      );
    }
    for (const source of states) {
      for (const site of transitionSites(source.spec)) {
        for (const { transition, pointer: tp } of site.transitions) {
          if (transition.target !== entry.name) continue;
          if (site.kind === 'on' && site.key === 'APPROVE') continue;
          report(
            'SPEC_RISKY_TOOL_NOT_APPROVED',
            [...source.pointer, ...tp],
            `this transition enters '${entry.name}', which runs high-risk tool '${invoke.tool}', without an APPROVE event; route it through a state that waits for APPROVE`,
          );
        }
      }
    }
  }
}

/**
 * One APPROVE approves one call: a person is shown one tool and its arguments. A state whose APPROVE can lead (through
 * its guarded branches) into two states that run high-risk tools is refused, since the runtime could show one call
 * and run the other.
 */
function checkApprovalTargets(
  states: StateEntry[],
  byName: Map<string, StateEntry>,
  tools: Record<string, ToolInfo>,
  report: Report,
): void {
  for (const entry of states) {
    const approve = transitionSites(entry.spec).find((site) => site.kind === 'on' && site.key === 'APPROVE');
    if (!approve) continue;
    const calls = new Map<string, string>();
    for (const { transition } of approve.transitions) {
      const target = transition.target === undefined ? undefined : byName.get(transition.target);
      const invoke = target?.spec.invoke;
      if (!target || !invoke || !('tool' in invoke) || !Object.hasOwn(tools, invoke.tool) || tools[invoke.tool]!.risk !== 'high') continue;
      calls.set(target.name, invoke.tool);
    }
    if (calls.size < 2) continue;
    const list = [...calls].map(([state, tool]) => `'${tool}' (state '${state}')`);
    report(
      'SPEC_AMBIGUOUS_APPROVAL',
      [...entry.pointer, ...approve.pointer],
      `APPROVE in state '${entry.name}' can lead to ${calls.size} high-risk tool calls, ${list.slice(0, -1).join(', ')} and ${list.at(-1)}; a person approves one call, so give each its own approval state`,
    );
  }
}

const DONE_SITES: Record<string, string> = { onDone: 'invoke onDone', onError: 'invoke onError', done: 'onDone' };

/**
 * A done or error event is sent once: if every branch of its list has a guard and all of them are false, nothing
 * handles it and the session cannot continue (the runtime refuses it with GUARD_REJECTED). `on` and `always` lists
 * are left alone: an unmatched user event is refused visibly and can be sent again, and an eventless transition
 * waits for its guard by design.
 */
export function checkFallbackBranches(states: StateEntry[], report: Report): void {
  for (const entry of states) {
    for (const site of transitionSites(entry.spec)) {
      const what = DONE_SITES[site.kind];
      if (what === undefined || site.transitions.length === 0) continue;
      if (site.transitions.some(({ transition }) => transition.guard === undefined)) continue;
      report(
        'SPEC_NO_FALLBACK_BRANCH',
        [...entry.pointer, ...site.pointer],
        `every ${what} branch of state '${entry.name}' has a guard; when all of them are false the session cannot continue. Add a last branch without a guard`,
      );
    }
  }
}

const SITE_NAMES: Record<string, string> = { ...DONE_SITES, always: 'always' };

/**
 * Branches are tried in order and the first whose guard holds wins, so a branch after one without a guard is never
 * taken. Each such branch is reported at its own pointer, naming the unguarded branch that shadows it.
 */
export function checkUnreachableBranches(states: StateEntry[], report: Report): void {
  for (const entry of states) {
    for (const site of transitionSites(entry.spec)) {
      const open = site.transitions.findIndex(({ transition }) => transition.guard === undefined);
      if (open < 0 || open === site.transitions.length - 1) continue;
      const what = site.kind === 'on' ? `on ${site.key}` : site.kind === 'after' ? `after ${site.key}` : SITE_NAMES[site.kind];
      for (const { pointer: at } of site.transitions.slice(open + 1)) {
        report(
          'SPEC_UNREACHABLE_BRANCH',
          [...entry.pointer, ...at],
          `this ${what} branch of state '${entry.name}' is never taken: branch #${open + 1} before it has no guard and always wins; move the unguarded branch last or give it a guard`,
        );
      }
    }
  }
}
