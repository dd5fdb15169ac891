import { spawn } from 'node:child_process';
import { REPO_DIR } from './project.ts';

/**
 * Runs a test process (`script`, from the sources) with FLOWING_FAULT set, so it kills itself at that crash point;
 * resolves with its stdout lines and how it ended (the signal, or the exit code with the end of its stderr). A process
 * still running after a minute is killed.
 */
export function runFaultChild(script: string, args: string[], fault: string): Promise<{ lines: string[]; ended: string }> {
  const child = spawn(process.execPath, ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), script, ...args], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLOWING_FAULT: fault },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ lines: stdout.split('\n').filter(Boolean), ended: signal ?? `code ${code}: ${stderr.slice(-2_000)}` });
    });
  });
}
