/**
 * Counts the intervals alive from now on, by wrapping the global timer functions. `process.getActiveResourcesInfo()`
 * leaves out unref'd timers (the SSE heartbeat is one), so a stream that forgot its heartbeat only shows up here.
 */
export function countLiveIntervals(): { live(): number; restore(): void } {
  const alive = new Set<unknown>();
  const realSetInterval = globalThis.setInterval;
  const realClearInterval = globalThis.clearInterval;
  const realClearTimeout = globalThis.clearTimeout;
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
    const timer = realSetInterval(...args);
    alive.add(timer);
    return timer;
  }) as typeof setInterval;
  globalThis.clearInterval = ((timer?: Parameters<typeof clearInterval>[0]) => {
    alive.delete(timer);
    realClearInterval(timer);
  }) as typeof clearInterval;
  globalThis.clearTimeout = ((timer?: Parameters<typeof clearTimeout>[0]) => {
    alive.delete(timer);
    realClearTimeout(timer);
  }) as typeof clearTimeout;
  return {
    live: () => alive.size,
    restore() {
      globalThis.setInterval = realSetInterval;
      globalThis.clearInterval = realClearInterval;
      globalThis.clearTimeout = realClearTimeout;
    },
  };
}
