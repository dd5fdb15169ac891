import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packAll } from '../consumer/packs.ts';
import { startLocalRegistry, type LocalRegistry } from './local-registry.ts';
import { readmeBlocks, shellCommands, snippetFile, USER_FACING, type ReadmeBlock } from './readme-blocks.ts';
import { runCommand, type CommandRun } from './run-command.ts';

const run = promisify(execFile);
/** The section the first-hour commands are in, and its quick start. */
const OWN_PROJECT = 'Use it in your own project';
const QUICK_START = /^Quick start/;

let work: string;
let registry: LocalRegistry;
let blocks: ReadmeBlock[];

beforeAll(async () => {
  blocks = await readmeBlocks();
});

/** npm's environment for the README's commands: this build's packages, no update notice. */
function npmEnv(): Record<string, string> {
  return { ...registry.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

/** Runs every command of `selected` blocks in order in `dir`, writes each TypeScript block as its file; returns the runs. */
async function followReadme(kind: string, dir: string, selected: ReadmeBlock[]): Promise<{ runs: CommandRun[]; snippets: string[] }> {
  const runs: CommandRun[] = [];
  const snippets: string[] = [];
  try {
    await followBlocks(dir, selected, runs, snippets);
  } finally {
    report(kind, runs);
  }
  return { runs, snippets };
}

async function followBlocks(dir: string, selected: ReadmeBlock[], runs: CommandRun[], snippets: string[]): Promise<void> {
  for (const block of selected) {
    if (block.skip) continue;
    if (block.lang === 'sh') {
      for (const command of shellCommands(block.text)) {
        const result = await runCommand(command, dir, npmEnv());
        runs.push(result);
        expect(result.code, `README.md:${block.line} \`${command}\` exited with ${result.code}:\n${result.output}`).toBe(0);
        if (result.served) expect(result.served.status, `${command}: GET ${result.served.url}`).toBe(200);
      }
    } else if (block.lang === 'ts') {
      const file = snippetFile(block.text) ?? `src/readme-${block.line}.ts`;
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), `${block.text}\n`);
      snippets.push(file);
    }
  }
}

function report(kind: string, runs: CommandRun[]): void {
  const lines = runs.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.command.split('\n')[0]}`);
  const total = runs.reduce((sum, r) => sum + r.ms, 0);
  console.log(`README commands in ${kind} (${(total / 1000).toFixed(1)} s):\n${lines.join('\n')}`);
}

function ownProjectBlocks(): ReadmeBlock[] {
  return blocks.filter((b) => b.lang === 'sh' && !b.skip && (b.section === OWN_PROJECT || QUICK_START.test(b.section)));
}

describe('the README', () => {
  it('marks every user-facing block it cannot run, and has the first-hour commands where this test looks for them', () => {
    for (const block of blocks) {
      const where = `README.md:${block.line} (${block.section})`;
      // Shell commands run, TypeScript type-checks; a block without a language is sample output.
      expect(['sh', 'ts', ''], where).toContain(block.lang);
    }
    expect(blocks.filter((b) => b.skip).length).toBeLessThanOrEqual(3);
    const first = ownProjectBlocks().flatMap((b) => shellCommands(b.text));
    expect(first[0]).toBe(
      'npm install --save-dev flowing && npx flowing init   # example machine + tool, dependencies, tsconfig, npm scripts',
    );
    expect(first.some((c) => c.startsWith('npx flowing run order-lookup --events events.jsonl'))).toBe(true);
    expect(first.some((c) => c.startsWith('npx flowing test'))).toBe(true);
    expect(blocks.at(-1)!.line).toBeGreaterThan(blocks[0]!.line);
    expect(USER_FACING.to).toBe('## Development');
  });
});

describe('the README, run from the packed packages', { timeout: 1_800_000 }, () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'flowing-readme-'));
    registry = await startLocalRegistry(await packAll(join(work, 'packs')));
  }, 900_000);
  afterAll(async () => {
    await registry?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('in a new npm init -y project: every shell command from "Use it in your own project" to "Development" succeeds, and every TypeScript block type-checks', async () => {
    const dir = join(work, 'npm-init');
    await mkdir(dir);
    await run('npm', ['init', '-y'], { cwd: dir, env: { ...process.env, ...npmEnv() } });
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('commonjs');
    const { runs, snippets } = await followReadme('a new npm init -y project', dir, blocks);
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('module');
    // The generated header carries the one version number, read from the installed package.
    const header = (await readFile(join(dir, 'machines/order-lookup/order-lookup.machine.ts'), 'utf8')).split('\n')[1];
    const { version } = JSON.parse(await readFile(join(dir, 'node_modules/flowing/package.json'), 'utf8')) as { version: string };
    expect(header).toContain(`generator:flowing@${version}`);
    const flowingTest = runs.find((r) => r.command.startsWith('npx flowing test'))!;
    expect(flowingTest.output).toContain('✓ order-lookup');
    expect(flowingTest.output).toContain('cases: 1/1 passed');

    expect(snippets.length).toBeGreaterThanOrEqual(4);
    await writeFile(
      join(dir, 'tsconfig.readme.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: true }, include: [...snippets, 'machines', 'tools'] }),
    );
    const tsc = await run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.readme.json'], { cwd: dir }).then(
      () => '',
      (error) => `${error.stdout}${error.stderr}`,
    );
    expect(tsc).toBe('');
  });

  const kinds: Array<[string, (dir: string) => Promise<void>]> = [
    ['an empty folder', async () => {}],
    [
      'an existing ES module project',
      async (dir) => {
        await writeFile(
          join(dir, 'package.json'),
          JSON.stringify({ name: 'esm-service', version: '1.0.0', type: 'module', scripts: { build: 'tsc' } }, null, 2),
        );
        await writeFile(
          join(dir, 'tsconfig.json'),
          JSON.stringify(
            {
              compilerOptions: { target: 'ES2022', module: 'NodeNext', rootDir: '.', outDir: 'dist', strict: true, skipLibCheck: true },
              include: ['src'],
            },
            null,
            2,
          ),
        );
        await mkdir(join(dir, 'src'));
        await writeFile(join(dir, 'src/index.ts'), 'export const answer: number = 42;\n');
      },
    ],
    [
      'an existing CommonJS TypeScript project',
      async (dir) => {
        await writeFile(
          join(dir, 'package.json'),
          JSON.stringify(
            { name: 'cjs-service', version: '1.0.0', type: 'commonjs', main: 'dist/src/index.js', scripts: { build: 'tsc' } },
            null,
            2,
          ),
        );
        await writeFile(
          join(dir, 'tsconfig.json'),
          JSON.stringify(
            {
              compilerOptions: {
                target: 'ES2022',
                module: 'commonjs',
                esModuleInterop: true,
                types: ['node'],
                rootDir: '.',
                outDir: 'dist',
                strict: true,
                skipLibCheck: true,
              },
              include: ['src'],
            },
            null,
            2,
          ),
        );
        await mkdir(join(dir, 'src'));
        await writeFile(join(dir, 'src/index.ts'), "import { join } from 'node:path';\nexport const home = join('var', 'app');\n");
      },
    ],
  ];
  for (const [kind, setUp] of kinds) {
    it(`in ${kind}: the commands of "Use it in your own project" and its quick start succeed`, async () => {
      const dir = join(work, kind.replace(/\W+/g, '-'));
      await mkdir(dir);
      await setUp(dir);
      await followReadme(kind, dir, ownProjectBlocks());
      if (kind.includes('CommonJS')) {
        // The project stays CommonJS; its own build compiles the machine with it and plain node runs it.
        expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('commonjs');
        expect(JSON.parse(await readFile(join(dir, 'tools/package.json'), 'utf8'))).toEqual({ type: 'module' });
        await writeFile(
          join(dir, 'src/lookup.ts'),
          [
            "import { createMemoryStore, createRuntime } from '@flowing/runtime';",
            "import { orderLookup } from '../machines/order-lookup/order-lookup.machine.js';",
            'async function main() {',
            '  const runtime = createRuntime({ machines: [orderLookup], store: createMemoryStore() });',
            '  const session = await runtime.createSession(orderLookup);',
            "  const result = await session.send({ type: 'ASK', orderId: 'A2' });",
            '  console.log(result.applied ? result.state : result.code, JSON.stringify((await session.snapshot()).context));',
            '}',
            'void main();',
            '',
          ].join('\n'),
        );
        await run('npx', ['--no-install', 'tsc', '-p', '.'], { cwd: dir }).catch((error) => {
          throw new Error(`${error.stdout}${error.stderr}`);
        });
        const { stdout } = await run(process.execPath, ['dist/src/lookup.js'], { cwd: dir });
        expect(stdout.trim()).toBe('answered {"orderId":"A2","status":"delivered"}');
      } else {
        expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).type).toBe('module');
      }
    });
  }
});
