import { execFile } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

/** The package tarballs `npm pack` makes of the built workspace, by package name. */
export type Tarballs = Record<string, string>;

/** Builds every package once (tsc -b is incremental) and packs each into `dir`, as a release would. */
export async function packAll(dir: string): Promise<Tarballs> {
  await mkdir(dir, { recursive: true });
  await run('npm', ['run', 'build', '--silent'], { cwd: REPO_DIR, maxBuffer: 16 * 1024 * 1024 }).catch((error) => {
    throw new Error(`npm run build failed:\n${error.stdout}\n${error.stderr}`);
  });
  await run('npm', ['pack', '--workspaces', '--include-workspace-root', '--pack-destination', dir, '--silent'], { cwd: REPO_DIR });
  const files = await readdir(dir);
  const byName: Tarballs = {};
  for (const file of files.filter((name) => name.endsWith('.tgz'))) {
    const name = file.replace(/-\d+\.\d+\.\d+\.tgz$/, '').replace(/^flowing-(spec|protocol|runtime|codegen|studio)$/, '@flowing/$1');
    byName[name] = join(dir, file);
  }
  return byName;
}

/** npm in a project folder (the registry serves third-party packages; ours come from the tarballs). */
export function npm(cwd: string, args: string[], timeout = 600_000) {
  return run('npm', [...args, ...NPM_FLAGS], { cwd, timeout, maxBuffer: 16 * 1024 * 1024 });
}

/** A new project folder whose package.json depends on the given tarballs. */
export async function newProject(dir: string, tarballs: Tarballs, names: string[], extra: Record<string, unknown> = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  const dependencies = Object.fromEntries(names.map((name) => [name, `file:${tarballs[name]}`]));
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies, ...extra }, null, 2),
  );
}

/** Every installed package under node_modules (nested ones included) and the folder's size in bytes. */
export async function installedPackages(dir: string): Promise<{ names: string[]; bytes: number }> {
  const names: string[] = [];
  let bytes = 0;
  async function size(path: string): Promise<void> {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) await size(full);
      else if (entry.isFile()) bytes += (await stat(full)).size;
    }
  }
  async function walk(modules: string): Promise<void> {
    const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      if (entry.name.startsWith('@')) {
        for (const scoped of await readdir(join(modules, entry.name))) {
          names.push(`${entry.name}/${scoped}`);
          await walk(join(modules, entry.name, scoped, 'node_modules'));
        }
      } else {
        names.push(entry.name);
        await walk(join(modules, entry.name, 'node_modules'));
      }
    }
  }
  await walk(join(dir, 'node_modules'));
  await size(join(dir, 'node_modules'));
  return { names: names.sort(), bytes };
}
