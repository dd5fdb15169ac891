import type { z } from 'zod';
import { pointer, problem, type SpecProblem } from './problems.ts';

type Issue = z.ZodError['issues'][number];
type Segment = string | number;

/**
 * The schema issues of a spec as problems at the field they are about. A union (an invoke is a tool, model or machine
 * call; a transition a name, an object or a list) fails as one issue at the union; this follows the form the value is
 * written in, so a wrong `memory.window` of a model call is reported at `/…/invoke/memory/window`, not at the invoke.
 * @example schemaProblems(FlowSpecSchema.safeParse(value).error!.issues, value)
 */
export function schemaProblems(issues: readonly Issue[], input: unknown): SpecProblem[] {
  return issues.flatMap((issue) => located(issue, [], input));
}

function located(issue: Issue, base: Segment[], root: unknown): SpecProblem[] {
  const path = [...base, ...(issue.path as Segment[])];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const branch = closestBranch(issue.errors, valueAt(root, path));
    if (branch) return branch.flatMap((inner) => located(inner, path, root));
  }
  return [problem('SPEC_SCHEMA', pointer(...path), issue.message)];
}

/**
 * The union member the value is closest to: the one whose issues reject the fewest of the value's own keys (a wrong
 * base type, an unknown key, a required key that is missing), then the one that got furthest into the value.
 * Undefined when several reject the value equally: it shows no form it was meant to have, so the union reports it.
 */
function closestBranch(branches: readonly Issue[][], value: unknown): Issue[] | undefined {
  const scored = branches.map((issues) => ({ issues, misfit: issues.reduce((sum, issue) => sum + misfit(issue, value), 0) }));
  const best = Math.min(...scored.map((s) => s.misfit));
  const closest = scored.filter((s) => s.misfit === best);
  if (closest.length === 1) return closest[0]!.issues;
  if (best > 0) return undefined;
  const depth = (issues: Issue[]) => Math.max(...issues.map((i) => i.path.length));
  const deepest = Math.max(...closest.map((s) => depth(s.issues)));
  const furthest = closest.filter((s) => depth(s.issues) === deepest);
  return furthest.length === 1 ? furthest[0]!.issues : undefined;
}

/** How much one issue says the value is not of the member's form at all (0: a problem inside a field of it). */
function misfit(issue: Issue, value: unknown): number {
  if (issue.path.length === 0) {
    if (issue.code === 'unrecognized_keys') return issue.keys.length;
    return issue.code === 'invalid_type' || issue.code === 'invalid_union' || issue.code === 'invalid_value' ? 1 : 0;
  }
  if (issue.path.length === 1 && valueAt(value, issue.path as Segment[]) === undefined) return 1;
  return 0;
}

function valueAt(root: unknown, path: readonly Segment[]): unknown {
  let at = root;
  for (const segment of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, segment)) return undefined;
    at = (at as Record<Segment, unknown>)[segment];
  }
  return at;
}
