import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodegen } from '../../codegen/index.ts';
import { copyProject, editJsonFile } from '../helpers/project.ts';

const SPEC = 'machines/order-support/order-support.flow.json';
const TOOL = 'tools/query_order.ts';

describe('generated code that checked clean is not checked again until something it reads changes', () => {
  let project: Awaited<ReturnType<typeof copyProject>>;
  beforeAll(async () => {
    project = await copyProject('flowing-check-cache-');
  });
  afterAll(() => project.remove());

  /** A new code generator each time, as a new `flowing codegen` process has. */
  async function generateInNewProcess() {
    const codegen = createCodegen({ rootDir: project.dir, persistTypeCheck: true });
    try {
      return await codegen.generate(SPEC, { write: false });
    } finally {
      codegen.dispose();
    }
  }

  it('reuses a clean check across processes, and checks again (and fails) once a tool it imports changed', async () => {
    const first = await generateInNewProcess();
    expect(first.ok).toBe(true);
    const second = await generateInNewProcess();
    expect(second).toMatchObject({ ok: true, typeCheck: 'reused' });

    // The tool's output type changes (its examples still hold): the order total, which the context's order declares.
    const tool = join(project.dir, TOOL);
    const original = await readFile(tool, 'utf8');
    expect(original).toContain('total: z.number()');
    await writeFile(tool, original.replace('total: z.number()', 'total: z.unknown()'));
    const broken = await generateInNewProcess();
    await writeFile(tool, original);
    expect(broken.typeCheck).toBe('checked');
    expect(broken.ok).toBe(false);
    expect(broken.problems.filter((p) => p.code === 'CODEGEN_TYPE_ERROR').map((p) => p.path)).toContain(
      '/states/active/states/fetch_order/invoke/onDone/1/assign/order',
    );

    // With the tool back as it was, the clean check of this very code holds again.
    expect(await generateInNewProcess()).toMatchObject({ ok: true, typeCheck: 'reused' });
  }, 180_000);

  it('checks code with a type error every time (an error is never remembered)', async () => {
    const spec = join(project.dir, SPEC);
    const before = await editJsonFile(spec, (s) => {
      s.states.active.states.fetch_order.invoke.onDone[0].guard = "context.intnt == 'refund'";
    });
    try {
      const codegen = createCodegen({ rootDir: project.dir });
      const first = await codegen.generate(SPEC, { write: false });
      const again = await codegen.generate(SPEC, { write: false });
      codegen.dispose();
      for (const result of [first, again]) {
        expect(result).toMatchObject({ ok: false, typeCheck: 'checked' });
        expect(result.problems.map((p) => p.path)).toContain('/states/active/states/fetch_order/invoke/onDone/0/guard');
      }
    } finally {
      await writeFile(spec, before);
    }
  }, 180_000);

  it('reuses the check of unchanged code within one long-lived generator (Generate after the live check)', async () => {
    const codegen = createCodegen({ rootDir: project.dir });
    const text = await readFile(join(project.dir, SPEC), 'utf8');
    const live = await codegen.generate(SPEC, { write: false, text });
    const generate = await codegen.generate(SPEC, { write: false });
    codegen.dispose();
    expect(live).toMatchObject({ ok: true });
    expect(generate).toMatchObject({ ok: true, typeCheck: 'reused' });
  }, 180_000);
});
