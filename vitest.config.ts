import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    // The package's own public doors, as generated code and tools import them.
    alias: [
      { find: /^flowing\/runtime$/, replacement: here('./runtime/index.ts') },
      { find: /^flowing\/runtime\/openai$/, replacement: here('./runtime/llm/openai.ts') },
      { find: /^flowing\/spec$/, replacement: here('./spec/index.ts') },
      { find: /^flowing\/codegen$/, replacement: here('./codegen/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test/artifacts/vitest-report.json' }]] : ['default'],
  },
});
