import { spawn } from 'node:child_process';

/** Commands that serve until stopped: they are run until they print their URL and answer it. */
const SERVING = /\bflowing (?:studio|serve|inspect)\b/;
const SERVE_TIMEOUT_MS = 60_000;
const COMMAND_TIMEOUT_MS = 600_000;

export interface CommandRun {
  command: string;
  ms: number;
  code: number | null;
  output: string;
  /** For a serving command: the URL it printed and what a GET of it answered. */
  served?: { url: string; status: number };
}

/**
 * Runs one README command with bash in `cwd`, as a user would type it. A serving command (`flowing studio`, `serve`,
 * `inspect`) gets `PORT=0` in its environment (the README's fixed port may be taken by another test run), is timed
 * until its first page answers, then stopped; its time is to that answer.
 */
export function runCommand(command: string, cwd: string, env: Record<string, string>): Promise<CommandRun> {
  const serving = SERVING.test(command);
  const started = performance.now();
  // A process group of its own, so stopping it stops npx and the node process npx started.
  const child = spawn('bash', ['-c', command], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, ...(serving ? { PORT: '0' } : {}) },
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (!serving) {
    const timer = setTimeout(stop, COMMAND_TIMEOUT_MS);
    return exited.then((code) => {
      clearTimeout(timer);
      return { command, ms: performance.now() - started, code, output };
    });
  }
  return new Promise<CommandRun>((resolve, reject) => {
    let url: string | undefined;
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${command} printed no URL within ${SERVE_TIMEOUT_MS} ms:\n${output}`));
    }, SERVE_TIMEOUT_MS);
    void exited.then((code) => {
      clearTimeout(timer);
      if (url === undefined) reject(new Error(`${command} exited with ${code} before serving:\n${output}`));
    });
    const check = async () => {
      url = /(https?:\/\/[^\s]+)/.exec(output)?.[1];
      if (!url) return;
      child.stdout.off('data', onData);
      clearTimeout(timer);
      try {
        const response = await fetch(url);
        await response.arrayBuffer();
        const ms = performance.now() - started;
        stop();
        await exited;
        resolve({ command, ms, code: 0, output, served: { url, status: response.status } });
      } catch (error) {
        stop();
        reject(error as Error);
      }
    };
    const onData = () => void check();
    child.stdout.on('data', onData);
  });
}
