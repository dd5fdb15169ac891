import { createRuntime, toFlowError, type LlmProvider, type RuntimeLimits } from '@flowing/runtime';
import { chooseProvider } from '../run/provider.ts';
import { loadServedMachines } from './machines.ts';
import { openServeStore } from './store.ts';

export interface ServeCommandOptions {
  port?: string;
  host?: string;
  store?: string;
  /** Comma-separated browser origins allowed to call the API. */
  cors?: string;
  /**
   * Redis: session lease TTL in ms (a dead process's sessions are taken over within it plus 1 s). SQLite: how long the
   * file's owner may miss its heartbeat before another process takes the file over.
   */
  leaseTtl?: string;
  /** Steps a session may make between two events from outside (`limits.stepsPerTurn`; a spec's own bound wins). */
  stepsPerTurn?: string;
  /** Bytes a session's log may take (`limits.maxLogBytes`). */
  maxLogBytes?: string;
  /** Bytes of live events a stream may have waiting for a slow client (`maxStreamLag.bytes`). */
  maxStreamLagBytes?: string;
  /** Live events a stream may have waiting for a slow client (`maxStreamLag.events`). */
  maxStreamLagEvents?: string;
  /** False turns off the per-client and per-session rate limits (`--no-rate-limit`). */
  rateLimit?: boolean;
  out?: (line: string) => void;
  err?: (line: string) => void;
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  stopSignal?: Promise<unknown>;
}

/**
 * `flowing serve`: the project's generated machines over HTTP + SSE. The token comes from FLOWING_TOKEN only (never a
 * flag, so it stays out of shell history and process lists). Exit codes: 0 after a clean stop, 1 when the server
 * could not start, 2 for a usage error (bad port, store or host without a token).
 */
export async function serveCommand(options: ServeCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = options.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  const fail = (error: unknown, status: number) => {
    const flow = toFlowError(error, 'SERVER_START_FAILED');
    err(`error ${flow.code}: ${flow.message}`);
    return status;
  };
  let server: typeof import('@flowing/runtime/server');
  try {
    server = await import('@flowing/runtime/server');
  } catch (error) {
    return fail(
      {
        code: 'SERVER_DEPS_MISSING',
        message: `the runtime server needs hono and @hono/node-server (npm install hono @hono/node-server): ${(error as Error).message}`,
      },
      2,
    );
  }
  const portText = options.port ?? process.env.PORT;
  const port = portText === undefined ? server.DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return fail({ code: 'SERVER_BAD_PORT', message: `--port must be 0-65535, not '${portText}'` }, 2);

  let opened;
  let llm: LlmProvider;
  let served;
  let limits: RuntimeLimits = {};
  const lagBytes = wholeOption(options.maxStreamLagBytes, '--max-stream-lag-bytes', 'SERVER_BAD_MAX_STREAM_LAG', 'bytes');
  const lagEvents = wholeOption(options.maxStreamLagEvents, '--max-stream-lag-events', 'SERVER_BAD_MAX_STREAM_LAG', 'events');
  if (typeof lagBytes === 'object') return fail(lagBytes, 2);
  if (typeof lagEvents === 'object') return fail(lagEvents, 2);
  try {
    served = await loadServedMachines();
    if (served.definitions.length === 0) {
      return fail({ code: 'UNKNOWN_MACHINE', message: 'no generated machine found in machines/ (run `flowing codegen` first)' }, 2);
    }
    llm = await chooseProvider();
    const leaseTtlMs = options.leaseTtl === undefined ? undefined : Number(options.leaseTtl);
    if (leaseTtlMs !== undefined && (!Number.isInteger(leaseTtlMs) || leaseTtlMs < 100)) {
      return fail(
        { code: 'SERVER_BAD_LEASE_TTL', message: `--lease-ttl must be a whole number of milliseconds ≥ 100, not '${options.leaseTtl}'` },
        2,
      );
    }
    const stepsPerTurn = wholeOption(options.stepsPerTurn, '--steps-per-turn', 'SERVER_BAD_STEPS_PER_TURN', 'steps');
    const maxLogBytes = wholeOption(options.maxLogBytes, '--max-log-bytes', 'SERVER_BAD_MAX_LOG_BYTES', 'bytes');
    if (typeof stepsPerTurn === 'object') return fail(stepsPerTurn, 2);
    if (typeof maxLogBytes === 'object') return fail(maxLogBytes, 2);
    limits = {
      ...(stepsPerTurn === undefined ? {} : { stepsPerTurn }),
      ...(maxLogBytes === undefined ? {} : { maxLogBytes }),
    };
    opened = await openServeStore(options.store, err, {
      ...(leaseTtlMs === undefined ? {} : { leaseTtlMs }),
      onFenced: (error) => err(`error STORE_FENCED: ${error.message}`),
    });
  } catch (error) {
    return fail(error, 2);
  }
  const tookOver = (opened.store as { tookOver?: { previous: { pid: number; host: string }; reason: string } }).tookOver;
  if (tookOver)
    out(
      `flowing serve: took the session file over from process ${tookOver.previous.pid} on ${tookOver.previous.host} (${tookOver.reason})`,
    );
  for (const id of served.notGenerated)
    err(`warning: machines/${id} has a spec but no generated code; run \`flowing codegen\` to serve it`);

  const runtime = createRuntime({ machines: served.definitions, store: opened.store, llm, limits });
  let running;
  try {
    running = await server.startServer(runtime, {
      host: options.host ?? process.env.HOST ?? server.DEFAULT_HOST,
      port,
      token: process.env.FLOWING_TOKEN,
      corsOrigins: options.cors
        ? options.cors
            .split(',')
            .map((o) => o.trim())
            .filter(Boolean)
        : [],
      specs: served.specs,
      maxStreamLag: {
        ...(lagBytes === undefined ? {} : { bytes: lagBytes }),
        ...(lagEvents === undefined ? {} : { events: lagEvents }),
      },
      ...(options.rateLimit === false ? { rateLimit: { client: false, session: false } } : {}),
    });
  } catch (error) {
    await opened.close();
    const code = toFlowError(error).code;
    return fail(error, code === 'SERVER_TOKEN_REQUIRED' || error instanceof RangeError ? 2 : 1);
  }
  out(`flowing serve: ${running.url} (machines: ${served.definitions.map((d) => d.id).join(', ')}; store: ${opened.description})`);
  try {
    const durability = await opened.store.durability?.();
    if (durability) out(`flowing serve: ${durability.summary}`);
  } catch (error) {
    err(`warning: the store did not say what a commit survives: ${toFlowError(error).message}`);
  }
  await (options.stopSignal ??
    new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    }));
  await running.close();
  await opened.close();
  return 0;
}

/** A flag holding a whole number of at least 1: the number, undefined when not given, or the usage error. */
function wholeOption(
  text: string | undefined,
  flag: string,
  code: string,
  unit: string,
): number | undefined | { code: string; message: string } {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (Number.isSafeInteger(value) && value >= 1) return value;
  return { code, message: `${flag} must be a whole number of ${unit} ≥ 1, not '${text}'` };
}
