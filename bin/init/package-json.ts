import { CliError } from '../cli-error.ts';

/** What `flowing init` asks of a project's package.json; existing entries are never changed. */
export interface PackageAdditions {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
  /** Dependencies whose install scripts Flowing needs (npm 11.16+ `allowScripts`; npm 12 runs no other). */
  allowScripts: Record<string, boolean>;
}

export interface PackageMerge {
  text: string;
  added: string[];
  kept: string[];
}

type PackageJson = Record<string, unknown> & {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  allowScripts?: Record<string, unknown>;
};

function indentOf(text: string): string | number {
  return /^\{\r?\n([ \t]+)"/.exec(text)?.[1] ?? 2;
}

/** A package name from a folder name (npm's rules: lower case, URL-safe). */
export function packageNameFor(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name || 'flowing-project';
}

/** A new package.json for an empty folder. */
export function newPackageJson(folder: string, additions: PackageAdditions): string {
  const pkg = {
    name: packageNameFor(folder),
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: additions.scripts,
    dependencies: additions.dependencies,
    devDependencies: additions.devDependencies,
    allowScripts: additions.allowScripts,
  };
  return JSON.stringify(pkg, null, 2) + '\n';
}

/**
 * How an existing project gets ES modules for machines/ and tools/: `switch` sets `"type": "module"` (the project has
 * no code whose meaning that changes); `folders` leaves the type and names the file that depends on it (machines/
 * and tools/ then get a package.json of their own).
 */
export type ModuleTypePlan = { kind: 'switch' } | { kind: 'folders'; because: string };

/**
 * Adds what is missing to an existing package.json, keeping every entry it has (a dependency already listed in any
 * section, or a script of the same name, is left as it is) and its indentation. A project that is not `"type":
 * "module"` is switched to it only when `moduleType` says that is safe.
 */
export function mergePackageJson(text: string, additions: PackageAdditions, moduleType: ModuleTypePlan): PackageMerge {
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(text) as PackageJson;
  } catch (error) {
    throw new CliError('INIT_BAD_PACKAGE_JSON', `package.json is not valid JSON (${(error as Error).message}); fix it and run init again`);
  }
  if (!pkg || typeof pkg !== 'object' || Array.isArray(pkg))
    throw new CliError('INIT_BAD_PACKAGE_JSON', 'package.json does not hold an object');
  const added: string[] = [];
  const kept: string[] = [];
  const listed = (name: string) =>
    [pkg.dependencies, pkg.devDependencies, pkg.peerDependencies as Record<string, string> | undefined].some(
      (section) => section && Object.hasOwn(section, name),
    );
  for (const section of ['dependencies', 'devDependencies'] as const) {
    for (const [name, range] of Object.entries(additions[section])) {
      if (listed(name)) {
        kept.push(`${name} (already listed)`);
        continue;
      }
      pkg[section] = { ...pkg[section], [name]: range };
      added.push(`${section} ${name}@${range}`);
    }
  }
  for (const [name, command] of Object.entries(additions.scripts)) {
    if (pkg.scripts && Object.hasOwn(pkg.scripts, name)) {
      if (pkg.scripts[name] !== command) kept.push(`script ${name} (already "${pkg.scripts[name]}")`);
      continue;
    }
    pkg.scripts = { ...pkg.scripts, [name]: command };
    added.push(`script ${name}`);
  }
  // An entry for the package (name-only or pinned, allowing or denying) is the project's decision and stays.
  const decided = (name: string) =>
    pkg.allowScripts &&
    typeof pkg.allowScripts === 'object' &&
    Object.keys(pkg.allowScripts).some((key) => key === name || key.startsWith(`${name}@`));
  for (const [name, allowed] of Object.entries(additions.allowScripts)) {
    if (decided(name)) {
      kept.push(`allowScripts ${name} (already decided)`);
      continue;
    }
    pkg.allowScripts = { ...pkg.allowScripts, [name]: allowed };
    added.push(`allowScripts ${name}`);
  }
  if (pkg.type !== 'module') {
    const was = pkg.type === undefined ? 'no "type", so CommonJS' : `"type": ${JSON.stringify(pkg.type)}`;
    if (moduleType.kind === 'switch') {
      pkg.type = 'module';
      added.push(`"type": "module" (was ${was}; generated machines and tools are ES modules, and no code here depends on the old type)`);
    } else {
      kept.push(`${was} (${moduleType.because} depends on it; machines/ and tools/ get a package.json of their own with "type": "module")`);
    }
  }
  const newline = text.endsWith('\n') ? '\n' : '';
  return { text: added.length ? JSON.stringify(pkg, null, indentOf(text)) + newline : text, added, kept };
}
