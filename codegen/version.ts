import { readFileSync } from 'node:fs';

/**
 * This package's version, from its package.json: next to this file when running from the sources, one folder up
 * from dist/ when installed. Every Flowing package carries the same version, so this is also what `flowing
 * --version` prints.
 */
function packageVersion(): string {
  for (const candidate of ['./package.json', '../package.json']) {
    let pkg: { name?: unknown; version?: unknown };
    try {
      pkg = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as typeof pkg;
    } catch {
      continue;
    }
    if (pkg.name === '@flowing/codegen' && typeof pkg.version === 'string') return pkg.version;
  }
  throw new Error('@flowing/codegen cannot find its own package.json to read its version from');
}

/** The generator version written into generated headers (`generator:flowing@<version>`): the package's version. */
export const GENERATOR_VERSION = packageVersion();
