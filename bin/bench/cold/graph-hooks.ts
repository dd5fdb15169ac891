// Module hooks for the import analysis of the cold Flowing process (registered with `module.register`): append one
// JSON line per resolved import, `{ parent, url }`, to the file named by FLOWING_BENCH_GRAPH.
import { appendFileSync } from 'node:fs';

type Resolve = (specifier: string, context: { parentURL?: string }) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: { parentURL?: string }, next: Resolve): Promise<{ url: string }> {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.FLOWING_BENCH_GRAPH!, `${JSON.stringify({ parent: context.parentURL ?? null, url: resolved.url })}\n`);
  return resolved;
}
