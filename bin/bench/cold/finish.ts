import type { AnyMachineDefinition } from '@flowing/runtime';

/**
 * The order-support machine of the tree the entry runs in. The path is computed, so the build of bin/ does not take
 * machines/ in; both entries load it the same way.
 */
export async function loadOrderSupport(): Promise<AnyMachineDefinition> {
  const url = new URL('../../../machines/order-support/order-support.machine.js', import.meta.url);
  return ((await import(url.href)) as { orderSupport: AnyMachineDefinition }).orderSupport;
}

/**
 * The end of a cold-start entry: with NODE_V8_COVERAGE set, writes the coverage of the imports and starts counting
 * afresh (so the next report holds what the session itself ran); runs the session; prints one JSON line with the
 * milliseconds since the process started when its imports were done and when the session was, and its CPU time.
 */
export async function finish(imported: number, session: () => Promise<unknown>): Promise<void> {
  if (process.env.NODE_V8_COVERAGE) (await import('node:v8')).takeCoverage();
  await session();
  const done = performance.now();
  const cpu = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ imported, done, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
}
