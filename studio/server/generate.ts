import type { CodegenFile, Problem } from '@flowing/codegen';
import { formatSpec, hasErrors, type SpecProblem } from '@flowing/spec';
import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { assertSpecAt, loadMachine, specProblems, storeSpec, strandingOf, type SaveBody } from './machines.ts';
import type { StrandedState } from './stranding.ts';

/** What Generate answers: the generated files, the problems, and whether the spec (when sent) and the code were written. */
export interface GenerateAnswer {
  ok: boolean;
  files: CodegenFile[];
  problems: Problem[];
  timings: Record<string, number>;
  scaffolded: string[];
  /** The spec's version after a Generate that sent an edited spec and wrote it; absent when nothing was saved. */
  version?: string;
  /** With `version`: states the saved edit removed in which sessions of the connected runtime wait, and a warning. */
  stranded?: StrandedState[];
  warning?: string;
}

const refuseInvalid = (id: string, problems: SpecProblem[], what: string) =>
  new StudioError('STUDIO_SPEC_INVALID', `${what} of machine ${id} has errors; codegen runs only on a valid spec`, { problems });

/**
 * Generate: runs codegen and writes the generated files when they type-check (422 STUDIO_SPEC_INVALID when the spec
 * has errors). Without `edit`, on the saved spec. With `edit` (the editor's unsaved spec and the version it was loaded
 * at), the spec is saved only together with its code: when the code does not type-check, nothing is written (`ok:
 * false` with the type errors), so the spec on disk never runs ahead of its generated code.
 */
export async function generateMachine(context: StudioContext, id: string, edit?: SaveBody): Promise<GenerateAnswer> {
  if (!edit) {
    // Under the codegen queue from the first read, so a delete of the machine never interleaves with its generation.
    return context.serial('codegen', async () => {
      const machine = await loadMachine(context, id);
      if (hasErrors(machine.problems)) throw refuseInvalid(id, machine.problems, `machines/${id}/${id}.flow.json`);
      const tools = await context.tools();
      const codegen = await context.codegen();
      const result = await codegen.generate(machine.path, { write: true, tools });
      return { ok: result.ok, files: result.files, problems: result.problems, timings: result.timings, scaffolded: result.scaffolded };
    });
  }
  const tools = await context.tools();
  const problems = await specProblems(context, id, edit.spec, tools);
  if (hasErrors(problems)) throw refuseInvalid(id, problems, 'the edited spec');
  const text = formatSpec(edit.spec);
  const generated = await context.serial('codegen', () =>
    context.serial(`machine:${id}`, async () => {
      const { file } = await assertSpecAt(context, id, edit.baseVersion);
      const codegen = await context.codegen();
      // Code first, spec last: codegen writes nothing unless the code type-checks, and then the spec follows it.
      const result = await codegen.generate(file, { text, write: true, tools });
      const answer = {
        ok: result.ok,
        files: result.files,
        problems: result.problems,
        timings: result.timings,
        scaffolded: result.scaffolded,
      };
      if (!result.ok) return { answer };
      return { answer, saved: await storeSpec(context, id, text, edit.baseVersion) };
    }),
  );
  if (!generated.saved) return generated.answer;
  const stranding = await strandingOf(context, id, generated.saved.before, edit.spec);
  return { ...generated.answer, version: generated.saved.version, ...stranding };
}
