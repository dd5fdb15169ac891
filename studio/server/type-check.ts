import type { Problem } from '@flowing/codegen';
import { formatSpec, hasErrors } from '@flowing/spec';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { specProblems } from './machines.ts';
import { machineFile } from './paths.ts';

/** The answer to a live check: codegen's problems of the edited spec (type errors mapped to spec pointers). */
export interface CheckAnswer {
  /** False when the spec has validation errors (nothing to type-check) or a newer check of the machine replaced this one. */
  typeChecked: boolean;
  /** A newer check of the same machine arrived while this one waited; its answer is the one to show. */
  superseded: boolean;
  /** Codegen's problems only (`CODEGEN_*`): the editor validates the spec itself. */
  problems: Problem[];
  timings: Record<string, number>;
}

/** Checks one body: `{ spec }` (400 STUDIO_BAD_REQUEST). */
export function checkBody(body: unknown): Record<string, unknown> {
  const spec = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).spec : undefined;
  if (!spec || typeof spec !== 'object' || Array.isArray(spec))
    throw new StudioError('STUDIO_BAD_REQUEST', 'send { spec }: the edited spec');
  return spec as Record<string, unknown>;
}

/** The newest check asked for, per context and machine: a queued check that is no longer the newest is skipped. */
const newest = new WeakMap<StudioContext, Map<string, number>>();

/**
 * The live type check: generates the code of an unsaved spec in memory and type-checks it with the server's warm
 * code generator, answering the same `CODEGEN_TYPE_ERROR` problems (code, spec pointer, message) Generate and
 * `flowing codegen` give. Writes nothing. Checks of one machine that queue up behind a running one collapse into the
 * newest, so typing never builds a backlog.
 */
export async function checkMachine(context: StudioContext, id: string, body: unknown): Promise<CheckAnswer> {
  const spec = checkBody(body);
  // The path first: a machine id that leads out of machines/ is refused whatever the spec.
  const { file } = await machineFile(context.roots, id);
  const counters = newest.get(context) ?? new Map<string, number>();
  newest.set(context, counters);
  const ticket = (counters.get(id) ?? 0) + 1;
  counters.set(id, ticket);
  const skipped = (superseded: boolean): CheckAnswer => ({ typeChecked: false, superseded, problems: [], timings: {} });
  const tools = await context.tools();
  const validation = await specProblems(context, id, spec, tools);
  if (hasErrors(validation)) return skipped(false);
  const text = formatSpec(spec);
  return context.serial('codegen', async () => {
    if (counters.get(id) !== ticket) return skipped(true);
    const codegen = await context.codegen();
    const result = await codegen.generate(file, { text, write: false, tools });
    return {
      typeChecked: result.files.length > 0,
      superseded: false,
      problems: result.problems.filter((p) => p.code.startsWith('CODEGEN_')),
      timings: result.timings,
    };
  });
}
