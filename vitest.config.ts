import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Every export of the workspace packages, resolved to its source file (the `@flowing/source` condition). */
function sourceAliases(folders: string[]) {
  return folders.flatMap((folder) => {
    const pkg = JSON.parse(readFileSync(here(`./${folder}/package.json`), 'utf8')) as {
      name: string; exports: Record<string, Record<string, string>>;
    };
    return Object.entries(pkg.exports).map(([subpath, conditions]) => {
      const name = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
      const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      return { find: new RegExp(`^${escaped}$`), replacement: here(`./${folder}/${conditions['@flowing/source']!.slice(2)}`) };
    });
  });
}

export default defineConfig({
  resolve: {
    // Tests run on the sources: generated code and tools import the packages by name.
    alias: sourceAliases(['spec', 'protocol', 'runtime', 'codegen', 'studio']),
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Builds the studio app from the current sources once per run (test/helpers/studio-server.ts serves it).
    globalSetup: ['test/setup/studio-app.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test/artifacts/vitest-report.json' }]] : ['default'],
  },
});
