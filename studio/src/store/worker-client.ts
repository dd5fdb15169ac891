/** What a worker answers to a request: its result, or the message of the error it caught. */
export interface WorkerAnswer<TResult> {
  id: number;
  result?: TResult;
  error?: string;
}

export interface WorkerClientOptions {
  /** Starts the worker (again after it stopped). */
  start: () => Worker;
  /** The code every failure carries, first in its message (`STUDIO_LAYOUT_FAILED: …`). */
  code: string;
  /** What the worker does, for the messages (`the layout`). */
  what: string;
  timeoutMs: number;
}

/**
 * Sends requests to one lazily started web worker and resolves each with its answer. Every failure rejects with an
 * error whose message starts with `code`: an error the worker caught, a worker that cannot start or stopped (every
 * waiting request fails, the next one starts it again), or no answer within `timeoutMs`. Nothing waits forever.
 * @example const layouts = createWorkerClient<Req, Geometry>({ start: () => new LayoutWorker(), code, what, timeoutMs })
 */
export function createWorkerClient<TRequest extends object, TResult>(
  options: WorkerClientOptions,
): (request: TRequest) => Promise<TResult> {
  const { code, what, timeoutMs } = options;
  let worker: Worker | undefined;
  let nextId = 1;
  const waiting = new Map<number, { resolve: (result: TResult) => void; reject: (error: Error) => void }>();

  const current = (): Worker => {
    if (worker) return worker;
    worker = options.start();
    worker.onmessage = (message: MessageEvent<WorkerAnswer<TResult>>) => {
      const pending = waiting.get(message.data.id);
      waiting.delete(message.data.id);
      if (!pending) return;
      if (message.data.error === undefined && message.data.result !== undefined) pending.resolve(message.data.result);
      else pending.reject(new Error(`${code}: ${message.data.error ?? `${what} gave no result`}`));
    };
    worker.onerror = (event) => {
      const error = new Error(`${code}: the worker for ${what} stopped (${event.message || 'no reason given'})`);
      for (const pending of waiting.values()) pending.reject(error);
      waiting.clear();
      worker?.terminate();
      worker = undefined;
    };
    return worker;
  };

  return (request) => {
    const id = nextId++;
    return new Promise<TResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`${code}: ${what} took longer than ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const settle = {
        resolve: (result: TResult) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      waiting.set(id, settle);
      try {
        current().postMessage({ ...request, id });
      } catch (error) {
        waiting.delete(id);
        settle.reject(new Error(`${code}: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  };
}
