/** One structured log line of the server. */
export interface ServerLogEntry {
  level: 'info' | 'warn' | 'error';
  /** A stable code (a server or runtime code, or `SERVER_STARTED` and the like). */
  code: string;
  message: string;
  [key: string]: unknown;
}

export type ServerLogger = (entry: ServerLogEntry) => void;

/** Names of environment variables whose values never appear in a log line. */
const SECRET_ENV_NAMES = ['FLOWING_TOKEN', 'OPENAI_API_KEY'];

const REDACTED = '[redacted]';

/**
 * Wraps a logger so every string in an entry has the given secrets (and the secret environment variables, and any
 * `Bearer ...` credential) replaced by `[redacted]` before it is written.
 */
export function redactingLogger(write: ServerLogger, secrets: readonly (string | undefined)[]): ServerLogger {
  const values = [...secrets, ...SECRET_ENV_NAMES.map((name) => process.env[name])].filter(
    (value): value is string => typeof value === 'string' && value.length >= 4,
  );
  return (entry) => write(redact(entry, values) as ServerLogEntry);
}

function redact(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') {
    let text = value.replace(/Bearer\s+[A-Za-z0-9._~+/-]+=*/gi, `Bearer ${REDACTED}`);
    for (const secret of secrets) text = text.split(secret).join(REDACTED);
    return text;
  }
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    out[key] = /authorization|token|api[-_]?key/i.test(key) ? REDACTED : redact(item, secrets, depth + 1);
  return out;
}

/** The default logger: one JSON line per entry on stderr. */
export const stderrLogger: ServerLogger = (entry) => {
  process.stderr.write(`${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`);
};
