import type { StudioContext } from './context.ts';
import { StudioError } from './errors.ts';
import { toolFile, toolNameFrom } from './paths.ts';

/** The tools of tools/ with their contracts (JSON Schema), sorted by name: the studio's palette. */
export async function listTools(context: StudioContext) {
  const catalog = await context.tools();
  return Object.values(catalog)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(({ name, description, idempotent, risk, retries, errors, inputSchema, outputSchema, file }) => ({
      name,
      description,
      idempotent,
      risk,
      retries,
      errors: errors ?? [],
      inputSchema,
      outputSchema,
      file,
    }));
}

/** "New tool": scaffolds `tools/<name>.ts` as a typed stub; an existing entry (even a dangling symlink) is 409 STUDIO_EXISTS. */
export async function createTool(context: StudioContext, body: unknown): Promise<{ path: string }> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new StudioError('STUDIO_BAD_REQUEST', 'send { name }');
  const name = toolNameFrom((body as Record<string, unknown>).name);
  return context.serial(`tool:${name}`, async () => {
    // Any existing entry counts, a dangling symlink included: a stub never replaces or writes through anything.
    if ((await toolFile(context.roots, name)).exists)
      throw new StudioError('STUDIO_EXISTS', `tools/${name}.ts already exists; it is never overwritten`, { path: `tools/${name}.ts` });
    const { scaffoldTool } = await import('@flowing/codegen');
    const made = await scaffoldTool(context.roots.rootDir, name);
    if (!made.created) throw new StudioError('STUDIO_EXISTS', `${made.path} already exists; it is never overwritten`, { path: made.path });
    return { path: made.path };
  });
}
