import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { ensureTypeScriptLoader } from './typescript-loader.ts';
import type { ServeCommandOptions } from './serve/serve.ts';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** Exit codes: 0 fine, 1 problems found / session error, 2 usage error. */
const program = new Command('flowing')
  .description('Agent state machines you can see, generate, type-check and run.')
  .version(pkg.version)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text) });

program
  .command('init')
  .description('Add Flowing to a project: an example machine and tool, dependencies, tsconfig settings, npm scripts')
  .argument('[dir]', 'the project folder (default: the current one)')
  .action(async (dir: string | undefined) => {
    const { initCommand } = await import('./init/init.ts');
    process.exitCode = await initCommand(dir, pkg.version);
  });

program
  .command('validate')
  .description('Validate flow specs (default: every machines/*/*.flow.json)')
  .argument('[files...]', 'spec files')
  .option('--json', 'print problems as JSON')
  .action(async (files: string[], options: { json?: boolean }) => {
    await ensureTypeScriptLoader();
    const { validateCommand } = await import('@flowing/codegen/cli');
    process.exitCode = await validateCommand(files, options);
  });

program
  .command('cost')
  .description('The most model calls, tool calls and tokens each turn and each path to a final state can cost, from the specs alone')
  .argument('[machines...]', 'machine ids (default: every machines/*/*.flow.json)')
  .option('--json', 'print the bounds as JSON')
  .action(async (machines: string[], options: { json?: boolean }) => {
    await ensureTypeScriptLoader();
    const { costCommand } = await import('./cost/cost.ts');
    process.exitCode = await costCommand(machines, options);
  });

program
  .command('codegen')
  .description('Generate <id>.machine.ts and <id>.registry.ts next to each spec, then type-check them')
  .argument('[files...]', 'spec files')
  .option('--check', 'write nothing; exit 1 when a generated file differs from what would be generated')
  .option('--offline', 'with --check: compare MCP tools with their snapshots in mcp/ only, without asking the servers')
  .option('--json', 'print problems as JSON')
  .action(async (files: string[], options: { check?: boolean; json?: boolean; offline?: boolean }) => {
    await ensureTypeScriptLoader();
    const { codegenCommand } = await import('@flowing/codegen/cli');
    let code = await codegenCommand(files, options);
    if (options.check && !options.offline) {
      const { mcpDriftLines } = await import('./mcp/pull.ts');
      const lines = await mcpDriftLines();
      for (const line of lines) (options.json ? process.stderr : process.stdout).write(line + '\n');
      if (lines.length > 0) code = Math.max(code, 1);
    }
    process.exitCode = code;
  });

program
  .command('mcp')
  .description('MCP servers declared in flowing.mcp.json')
  .command('pull')
  .description("List each server's tools and write mcp/<server>.snapshot.json (then run `flowing codegen`)")
  .argument('[servers...]', 'server names (default: every declared server)')
  .action(async (servers: string[]) => {
    const { mcpPullCommand } = await import('./mcp/pull.ts');
    process.exitCode = await mcpPullCommand(servers);
  });

program
  .command('run')
  .description('Run one session headless and print its events (exit 1 when any event was refused or the session failed)')
  .argument('<machine>', 'machine id (machines/<id>/) ')
  .option('--message <text>', 'send a USER_MESSAGE with this text')
  .option('--events <file>', 'send the events of a JSON-lines file, one per line')
  .option('--input <json>', "the new session's input: a JSON object of context fields")
  .option('--json', 'print events as JSON lines')
  .option('--store <store>', 'keep the session in sqlite:PATH or redis://HOST:PORT (default: memory, gone at exit)')
  .option('--session <id>', 'continue this stored session (needs --store), e.g. to APPROVE later')
  .option('--record <name>', 'save the session as the regression case machines/<machine>/cases/<name>.case.jsonl')
  .action(
    async (
      machine: string,
      options: { message?: string; events?: string; input?: string; json?: boolean; store?: string; session?: string; record?: string },
    ) => {
      await ensureTypeScriptLoader();
      const { runCommand } = await import('./run/run.ts');
      process.exitCode = await runCommand(machine, options);
    },
  );

program
  .command('serve')
  .description('Serve the generated machines over HTTP + SSE (set FLOWING_TOKEN to listen beyond 127.0.0.1)')
  .option('--port <port>', 'port (default: $PORT or 8787; 0 picks a free one)')
  .option('--host <host>', 'host (default: $HOST or 127.0.0.1)')
  .option('--store <store>', 'sqlite:PATH or redis://HOST:PORT (default: sqlite:.flowing/sessions.db)')
  .option('--cors <origins>', 'comma-separated browser origins allowed to call the API')
  .option('--no-rate-limit', 'turn off the per-client and per-session rate limits (behind a gateway that limits, or for load tests)')
  .option(
    '--lease-ttl <ms>',
    "with redis://: session lease TTL, a dead process's sessions are taken over within it + 1 s; with sqlite: how long the file's owner may miss its heartbeat before another process takes the file over (an owner on this host that is gone: at once) (default 10000)",
  )
  .option(
    '--steps-per-turn <n>',
    "steps a session may make between two events from outside; beyond, the event is refused (STEP_LIMIT, default 1000; a spec's limits.stepsPerTurn wins)",
  )
  .option(
    '--max-log-bytes <bytes>',
    'bytes of events and journal a session may log; beyond, events are refused (SESSION_LOG_FULL, default 268435456)',
  )
  .option(
    '--max-stream-lag-bytes <bytes>',
    'bytes of live events a stream may hold for a client that reads too slowly; beyond, it is sent SSE_CLIENT_TOO_SLOW and disconnected (default 4194304)',
  )
  .option('--max-stream-lag-events <n>', 'the same bound in events (default 10000)')
  .action(async (options: ServeCommandOptions) => {
    await ensureTypeScriptLoader();
    const { serveCommand } = await import('./serve/serve.ts');
    process.exitCode = await serveCommand(options);
  });

program
  .command('sessions')
  .description('List stored sessions, newest first (a SQLite file is opened read-only, so this works beside a running server)')
  .option('--status <status>', 'only these statuses (comma-separated: running, waiting, done, error, cancelled, needs_attention)')
  .option('--machine <id>', 'only sessions of this machine')
  .option('--store <store>', 'sqlite:PATH or redis://HOST:PORT (default: sqlite:.flowing/sessions.db)')
  .option('--limit <n>', 'most sessions to list (default 100)')
  .option('--json', 'print sessions as JSON lines')
  .option('--stale', 'only sessions recorded under another machine version that do not continue on the served one, with the reasons')
  .action(async (options: { status?: string; machine?: string; store?: string; limit?: string; json?: boolean; stale?: boolean }) => {
    if (options.stale) await ensureTypeScriptLoader();
    const { sessionsCommand } = await import('./serve/sessions.ts');
    process.exitCode = await sessionsCommand(options);
  });

program
  .command('migrate')
  .description("Carry sessions of an older machine version onto the served one (through each machine's `migrate` hook in its .impl.ts)")
  .option(
    '--dry-run',
    'write nothing (opens a SQLite file read-only, so it runs beside a server); print what would be migrated and what stays stale',
  )
  .option('--machine <id>', 'only sessions of this machine')
  .option('--store <store>', 'sqlite:PATH or redis://HOST:PORT (default: sqlite:.flowing/sessions.db)')
  .option('--json', 'print the report as JSON')
  .action(async (options: { dryRun?: boolean; machine?: string; store?: string; json?: boolean }) => {
    await ensureTypeScriptLoader();
    const { migrateCommand } = await import('./serve/migrate.ts');
    process.exitCode = await migrateCommand(options);
  });

program
  .command('studio')
  .description('Serve the prebuilt studio (graph editor) and its API for this project on a local port')
  .option('--port <port>', 'port (default: $PORT or 5173; 0 picks a free one)')
  .option('--host <host>', 'host (default: $HOST or 127.0.0.1)')
  .action(async (options: { port?: string; host?: string }) => {
    // No TypeScript loader up front: the server registers tsx itself when it first imports the project's tools.
    const { studioCommand } = await import('@flowing/studio/server');
    // The Inspect mode's runtime loads the generated machines on its first request, with the loader registered then.
    const runtimeApp = async () => {
      await ensureTypeScriptLoader();
      const { createStudioRuntimeApp } = await import('./studio/runtime-app.ts');
      return createStudioRuntimeApp();
    };
    const { checkCase } = await import('./studio/case-checker.ts');
    await studioCommand({ ...options, runtimeApp, checkCase });
  });

program
  .command('inspect')
  .description('Open the studio on a session file (a .flowing.jsonl export): its events, graph states and scrubber, offline')
  .argument('<file>', 'the session export to open')
  .option('--port <port>', 'port (default: $PORT or 5173; 0 picks a free one)')
  .option('--host <host>', 'host (default: $HOST or 127.0.0.1)')
  .action(async (file: string, options: { port?: string; host?: string }) => {
    const { inspectCommand } = await import('./inspect/inspect.ts');
    await inspectCommand(file, options);
  });

program
  .command('test')
  .description(
    'Path tests from the graph and replay of the recorded cases (machines/<id>/cases/*.case.jsonl) against the current machines; exit 1 on any divergence',
  )
  .argument('[machines...]', 'machine ids (default: every generated machine)')
  .option('--update', 'accept the new behaviour into the diverging case files (review with git diff)')
  .option('--json', 'print the results as one JSON document')
  .option('--no-paths', 'replay the cases only')
  .option('--live', 'run the cases against the configured OpenAI-compatible model and the tools marked safe (idempotent, low risk)')
  .action(async (machines: string[], options: { update?: boolean; json?: boolean; paths?: boolean; live?: boolean }) => {
    await ensureTypeScriptLoader();
    const { testCommand } = await import('./test/test-command.ts');
    process.exitCode = await testCommand(machines, options);
  });

program
  .command('bench')
  .description('Measure runtime overhead against bare XState and a hand-written loop')
  .option('--rounds <n>', 'rounds, each case of each in a new process (default 5)')
  .option('--sessions <n>', 'sessions timed per case and round (default 300)')
  .option('--concurrency <n>', 'sessions in flight in the second table (default 32)')
  .option('--warmup <n>', 'untimed sessions per case before timing (default 2000; 600 with SQLite or Redis)')
  .option('--redis <url>', 'Redis server for the Redis case (default: start a redis-server on a free loopback port)')
  .option('--idle <n>', 'sessions each memory process keeps per kind (default 1000)')
  .option('--cold <n>', 'new processes per cold-start case (default 20)')
  .action(
    async (options: {
      rounds?: string;
      sessions?: string;
      concurrency?: string;
      warmup?: string;
      redis?: string;
      idle?: string;
      cold?: string;
    }) => {
      await ensureTypeScriptLoader();
      const { benchCommand } = await import('./bench/index.ts');
      process.exitCode = await benchCommand(options);
    },
  );

if (process.argv.length <= 2) {
  program.outputHelp({ error: true });
  process.exit(2);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    const ok = error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
    process.exit(ok ? 0 : 2);
  }
  throw error;
}
