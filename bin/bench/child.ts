import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `bin/bench/<entry>` (a module that reads its JSON config from argv[2] and prints one JSON line) in a fresh
 * Node process with this process's loader flags and `--expose-gc`; resolves with the parsed line. A fresh process per
 * measurement keeps one case's JIT and GC state from leaking into the next.
 */
export function runChild<T>(entry: string, config: unknown): Promise<T> {
  const file = fileURLToPath(new URL(`./${entry}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', file, JSON.stringify(config)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const line = text.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${entry} exited with ${signal ?? code} (its stderr is above)`));
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${entry} printed no JSON result: ${line.slice(0, 200)}`));
      }
    });
  });
}

/** The body of a child entry: runs `fn` on the config in argv[2] and prints its result as one JSON line. */
export function childMain<TConfig, TResult>(fn: (config: TConfig) => Promise<TResult>): void {
  fn(JSON.parse(process.argv[2] ?? '{}') as TConfig).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
