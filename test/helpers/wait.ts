/**
 * `promise`, or a failure naming `what` when it has not settled within `ms`. A deadline on an awaited event (so a
 * missing event fails with its name instead of the test timeout), never a pause: it ends as soon as the event comes.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
