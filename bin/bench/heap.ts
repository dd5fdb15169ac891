import { createMemoryStore, createRuntime } from '@flowing/runtime';
import { ensureTypeScriptLoader } from '../typescript-loader.ts';
import { loadMachine } from '../run/load.ts';
import { benchProvider } from './model.ts';

/** Child-process part of the benchmark (run with --expose-gc): bytes retained per idle session. */
export async function measureIdleHeap(count: number): Promise<{ perSession: number; storeOnly: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  await ensureTypeScriptLoader();
  const definition = await loadMachine('order-support');
  const store = createMemoryStore();
  const runtime = createRuntime({ machines: [definition], store, llm: benchProvider() });
  // Warm up the code paths so compiled code is not counted.
  for (let i = 0; i < 200; i++) await runtime.createSession(definition, undefined, { sessionId: `warm-${i}` });
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    return process.memoryUsage().heapUsed;
  };
  const before = await settle();
  for (let i = 0; i < count; i++) await runtime.createSession(definition, undefined, { sessionId: `s-${i}` });
  const after = await settle();
  const sample = await store.load('s-0');
  const events = await store.readEvents('s-0');
  return { perSession: (after - before) / count, storeOnly: JSON.stringify({ sample, events }).length };
}
