import { getHeapSnapshot } from 'node:v8';

function gcOrThrow(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  return gc;
}

/** The heap used after four full GCs, `pauseMs` apart (so finalizers and weak callbacks have run). */
export async function settledHeap(pauseMs = 10): Promise<number> {
  const gc = gcOrThrow();
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

/**
 * The heap after full GCs less what V8 keeps for compiled code: bytecode, optimized code with its deoptimization
 * data, relocation info and source positions, feedback vectors (snapshot type `code`), and the weak lists of code
 * depending on object shapes. The optimizing tiers go on compiling hot paths for thousands of sessions after any
 * short warm-up, and that code (1.2-2.2 KB a session over 1,000 sessions in the load runs measured) is not memory an
 * idle session holds; with the tiers off (--no-opt --no-maglev --no-sparkplug) the plain heap diff is 2-57 B a session.
 */
export async function dataHeap(pauseMs = 10): Promise<number> {
  await settledHeap(pauseMs);
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot().setEncoding('utf8')) chunks.push(chunk as string);
  const snapshot = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  chunks.length = 0;
  const {
    node_fields: fields,
    node_types: [types],
  } = snapshot.snapshot.meta;
  const width = fields.length;
  const [type, name, size] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const { nodes, strings } = snapshot;
  let bytes = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const kind = types[nodes[i + type]!];
    // `native` and `synthetic` nodes are Node's objects outside the V8 heap (not in heapUsed either).
    if (kind === 'code' || kind === 'native' || kind === 'synthetic') continue;
    if (kind === 'hidden' && strings[nodes[i + name]!] === 'system / WeakArrayList') continue;
    bytes += nodes[i + size]!;
  }
  return bytes;
}
