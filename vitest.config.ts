import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Every export of the workspace packages, resolved to its source file (the `@flowing/source` condition). */
function sourceAliases(folders: string[]) {
  return folders.flatMap((folder) => {
    const pkg = JSON.parse(readFileSync(here(`./${folder}/package.json`), 'utf8')) as {
      name: string;
      exports: Record<string, Record<string, string>>;
    };
    return Object.entries(pkg.exports).map(([subpath, conditions]) => {
      const name = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
      const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      return { find: new RegExp(`^${escaped}$`), replacement: here(`./${folder}/${conditions['@flowing/source']!.slice(2)}`) };
    });
  });
}

/**
 * The slow lane: what `npm run test:all` adds to `npm test`. Chromium end to end, soak, load, crash (processes
 * SIGKILLed, many rounds) and packaging tests, and four files of 20-70 s each that fuzz or check the whole project
 * (durations measured on a shared 2-core machine; see the README's "Tests").
 */
export const SLOW_LANE = [
  // the support-desk example: three machines run, replayed and path-tested through the CLI (15-20 s)
  'test/testing/support-desk.test.ts',
  // type-check reuse across processes: codegen runs in child processes (15-20 s)
  'test/codegen/check-cache.test.ts',
  // MCP servers in child processes, code generation in a project copy
  'test/mcp/**/*.test.ts',
  // conversations: two machines generated in a project copy, then run (60-90 s under load)
  'test/codegen/conversation-codegen.test.ts',
  'test/runtime/conversation.test.ts',
  // memory: a machine with summaries generated in a project copy, then run
  'test/conversation/memory-codegen.test.ts',
  // Chromium
  'test/e2e/**/*.test.ts',
  'test/server/sse-chromium.test.ts',
  // packaging: npm pack + install into projects outside the repository (the consumer and the README's doc tests)
  'test/consumer/**/*.test.ts',
  'test/docs/**/*.test.ts',
  // soak and load
  'test/server/redis-soak.test.ts',
  'test/server/load*.test.ts',
  // crash: SIGKILLed servers, stores and children
  'test/server/crash-serve.test.ts',
  'test/server/crash-timers.test.ts',
  'test/runtime/crash-points.test.ts',
  'test/runtime/crash-child.test.ts',
  'test/runtime/agent-approval-crash.test.ts',
  'test/runtime/redis-aof-kill.test.ts',
  'test/runtime/store-durability.test.ts',
  // corpus, property and whole-project runs, 20-70 s each: the hostile-spec corpus (B1), the codegen property run,
  // tsc over everything (also `npm run typecheck`), the benchmark smoke run
  'test/codegen/hostile.test.ts',
  'test/codegen/property.test.ts',
  'test/project/typecheck.test.ts',
  'test/cli/bench.test.ts',
  // one writer per SQLite file: writer and reader child processes (about 15 s); `flowing serve` processes refused,
  // SIGKILLed and restarted five times, paused and fenced (about 55 s)
  'test/server/sqlite-owner-serve.test.ts',
  'test/store/sqlite-owner-processes.test.ts',
  // three `flowing serve` processes started in turn (limits given as flags)
  'test/server/serve-limits.test.ts',
  // a `flowing serve` process, three paused SSE clients and some 20 MB of events
  'test/server/sse-backpressure-serve.test.ts',
  // four CLI processes at once (validate and cost on a project copy), 15-25 s
  'test/cli/cost.test.ts',
  // the CLI started four times over a project copy with a regenerated machine (about 15 s)
  'test/cli/migrate.test.ts',
  // codegen runs over a project copy, 40-60 s each: agent calls in generated code, order-support's model calls per request
  'test/codegen/agent-codegen.test.ts',
  'test/runtime/order-support-calls.test.ts',
  // a measurement: first streamed token through a spawned `flowing serve`, p50 over rounds
  'test/server/first-token.test.ts',
  // the studio's live type check and Generate of an edited spec: warm and cold type checks, and `flowing codegen` runs
  'test/studio/api-check.test.ts',
  // channels: a SIGKILLed sender, runtimes on a real Redis, two `flowing serve` processes with the receiver killed
  'test/runtime/channels-crash.test.ts',
  'test/runtime/channels-redis.test.ts',
  'test/server/channels-serve.test.ts',
];

const ALL_TESTS = ['test/**/*.test.ts'];

/**
 * One lane: the packages resolved to their sources, timeouts, one process per file. `order` and `workers`: lanes
 * run one after the other (the fast one first), each with its own number of files at once.
 */
const lane = (name: string, include: string[], exclude: string[], order: number, workers: number): TestProjectInlineConfiguration => ({
  resolve: {
    // Tests run on the sources: generated code and tools import the packages by name.
    alias: sourceAliases(['spec', 'protocol', 'runtime', 'codegen', 'studio']),
  },
  test: {
    name,
    include,
    exclude: ['**/node_modules/**', ...exclude],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { groupOrder: order },
    maxWorkers: workers,
  },
});

export default defineConfig({
  // The root project loads the global setup, which imports @flowing/studio from its sources too.
  resolve: { alias: sourceAliases(['spec', 'protocol', 'runtime', 'codegen', 'studio']) },
  test: {
    // `npm test` runs the fast lane (--project fast); `npm run test:all` runs both. The fast lane runs a file per
    // core (vitest's default is one fewer: a single file at a time on two cores); the slow lane runs one file at a
    // time, as its load, soak and timing figures were measured, and nothing else runs beside it.
    projects: [lane('fast', ALL_TESTS, SLOW_LANE, 0, availableParallelism()), lane('slow', SLOW_LANE, [], 1, 1)],
    // Builds the studio app from the current sources once per run (test/helpers/studio-server.ts serves it); set on
    // the root so it runs once whichever lanes run, and every lane sees what it provides.
    globalSetup: ['test/setup/studio-app.ts'],
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test/artifacts/vitest-report.json' }]] : ['default'],
  },
});
