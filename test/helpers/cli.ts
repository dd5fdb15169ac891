import { join } from 'node:path';
import { REPO_DIR } from './project.ts';

/** Node arguments that run the `flowing` CLI from the sources (no build), as tests do. */
export function cliArgs(...args: string[]): string[] {
  return ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), join(REPO_DIR, 'bin/cli.ts'), ...args];
}
