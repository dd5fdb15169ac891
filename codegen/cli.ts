import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { join, relative, resolve } from 'node:path';
import {
  channelRoutes,
  checkChannelProject,
  escapeControlCharacters,
  formatProblemLine,
  parseSpecText,
  pointer,
  problemForJson,
  stringifyJsonSafely,
} from '@flowing/spec';
import { createCodegen, flowSchemaText, writeFileAtomic } from './codegen.ts';
import type { Problem } from './problems.ts';
import { explainUnknownTools } from './import-failure.ts';
import { loadToolCatalog } from './tool-catalog.ts';
import { findSpecFiles, loadMachineCatalog, loadProjectSpecs, machineCatalog } from './machine-catalog.ts';

export { findSpecFiles, loadProjectSpecs };

interface Finding extends Problem {
  file: string;
}

const EXIT_OK = 0;
const EXIT_PROBLEMS = 1;
const EXIT_USAGE = 2;
const SCHEMA_FILE = 'machines/flow.schema.json';

async function resolveFiles(rootDir: string, files: string[]): Promise<{ files: string[] } | { error: string }> {
  if (files.length === 0) return { files: await findSpecFiles(rootDir) };
  for (const file of files) {
    const info = await stat(resolve(rootDir, file)).catch(() => undefined);
    if (!info) return { error: `no such file: ${file}` };
    if (!info.isFile()) return { error: `not a file: ${file} (name .flow.json files, or none for every machines/*/*.flow.json)` };
  }
  return { files: files.map((f) => relative(rootDir, resolve(rootDir, f)).split('\\').join('/')) };
}

/**
 * Problems one a line (`file#pointer CODE message`), or as JSON: names from a spec are escaped either way, so a
 * hostile state name can neither split a line nor send an escape sequence to the terminal.
 */
function print(findings: Finding[], json: boolean | undefined, extra: Record<string, unknown> = {}): void {
  if (json) {
    process.stdout.write(stringifyJsonSafely({ ...extra, problems: findings.map(problemForJson) }, 2) + '\n');
    return;
  }
  for (const f of findings) process.stdout.write(formatProblemLine(f.file, f) + '\n');
}

/** A spec lives at `<dir>/<id>/<id>.flow.json`: its generated files and the studio find it by its id. */
function fileNameProblems(file: string, id: string): Finding[] {
  const expected = `${id}.flow.json`;
  if (basename(file) === expected && basename(dirname(file)) === id) return [];
  return [
    {
      file,
      code: 'CODEGEN_FILE_NAME',
      severity: 'error',
      path: '/id',
      message: `a spec with id '${id}' must be saved as ${id}/${expected} (found ${file}); rename the file or change the id`,
    },
  ];
}

/** `flowing validate [files] [--json]`: exit 0 when no errors, 1 when a spec has errors, 2 on usage errors. */
export async function validateCommand(files: string[], options: { json?: boolean }, rootDir = process.cwd()): Promise<number> {
  const resolved = await resolveFiles(rootDir, files);
  if ('error' in resolved) {
    process.stderr.write(`flowing validate: ${escapeControlCharacters(resolved.error)}\n`);
    return EXIT_USAGE;
  }
  const loadFailures: Finding[] = [];
  const tools = await loadToolCatalog(rootDir, {
    onError: (file, error) =>
      loadFailures.push({
        file,
        code: 'CODEGEN_TOOL_LOAD_FAILED',
        severity: 'warning',
        path: '',
        message: `${file} could not be imported: ${(error as Error).message}`,
      }),
  });
  const failedTools = new Set(loadFailures.map((f) => f.file));
  const findings: Finding[] = [...loadFailures];
  const specs = await loadProjectSpecs(rootDir);
  const machines = machineCatalog(specs);
  const resolveMachine = (id: string) => specs.get(id)?.spec;
  const checked = new Map<string, string>();
  for (const file of resolved.files) {
    const text = await readFile(resolve(rootDir, file), 'utf8');
    const result = parseSpecText(text, { tools, machines, resolveMachine });
    for (const problem of explainUnknownTools(result.problems, failedTools)) findings.push({ file, ...problem });
    if (result.spec) findings.push(...fileNameProblems(file, result.spec.id));
    if (result.spec) checked.set(result.spec.id, file);
  }
  // Channels are routed between machines: checked over every spec of the project, reported in the files named.
  const everySpec = [...specs.values()].map((s) => s.spec);
  for (const problem of checkChannelProject(everySpec)) {
    const file = checked.get(problem.machine);
    if (file) findings.push({ file, code: problem.code, severity: 'error', path: pointer(...problem.path), message: problem.message });
  }
  const routes = channelRoutes(everySpec);
  print(findings, options.json, { files: resolved.files, routes });
  if (!options.json && routes.length > 0) {
    process.stdout.write(`channel routes:\n${routes.map((r) => `  ${r.pattern} -> ${r.machine} (key: ${r.key})`).join('\n')}\n`);
  }
  if (!options.json && findings.length === 0) process.stdout.write(`${resolved.files.length} spec(s) valid\n`);
  return findings.some((f) => f.severity === 'error') ? EXIT_PROBLEMS : EXIT_OK;
}

/**
 * `flowing codegen [--check] [files] [--json]`: generates and type-checks; with `--check`, writes nothing and fails
 * when any generated file differs from what the spec generates now.
 */
export async function codegenCommand(
  files: string[],
  options: { check?: boolean; json?: boolean },
  rootDir = process.cwd(),
): Promise<number> {
  const resolved = await resolveFiles(rootDir, files);
  if ('error' in resolved) {
    process.stderr.write(`flowing codegen: ${escapeControlCharacters(resolved.error)}\n`);
    return EXIT_USAGE;
  }
  const codegen = createCodegen({ rootDir, persistTypeCheck: true });
  const tools = await loadToolCatalog(rootDir);
  const machines = await loadMachineCatalog(rootDir);
  const findings: Finding[] = [];
  const report: Array<{
    spec: string;
    files: Array<{ path: string; changed: boolean }>;
    timings: Record<string, number>;
    typeCheck?: 'checked' | 'reused';
  }> = [];
  const drifted: string[] = [];

  const schemaText = flowSchemaText();
  const schemaOnDisk = await readFile(join(rootDir, SCHEMA_FILE), 'utf8').catch(() => undefined);
  if (schemaOnDisk !== schemaText) {
    if (options.check) drifted.push(SCHEMA_FILE);
    else await writeFileAtomic(join(rootDir, SCHEMA_FILE), schemaText);
  }

  for (const file of resolved.files) {
    const misnamed = await readFile(resolve(rootDir, file), 'utf8').then((text) => {
      const id = parseSpecText(text).spec?.id;
      return id === undefined ? [] : fileNameProblems(file, id);
    });
    if (misnamed.length > 0) {
      findings.push(...misnamed);
      continue;
    }
    const result = await codegen.generate(file, {
      write: !options.check,
      typeCheck: !options.check,
      tools: options.check ? tools : undefined,
      machines,
    });
    for (const problem of result.problems) findings.push({ file, ...problem });
    report.push({
      spec: file,
      files: result.files.map((f) => ({ path: f.path, changed: f.changed })),
      timings: result.timings,
      ...(result.typeCheck ? { typeCheck: result.typeCheck } : {}),
    });
    if (options.check && result.ok) {
      for (const generated of result.files.filter((f) => f.changed)) {
        drifted.push(generated.path);
        findings.push({
          file,
          code: generated.previous === undefined ? 'CODEGEN_MISSING_FILE' : 'CODEGEN_DRIFT',
          severity: 'error',
          path: '',
          message: `${generated.path} ${generated.previous === undefined ? 'is missing' : 'differs from what the spec generates'}; run \`flowing codegen\``,
          generatedFile: generated.path,
        });
      }
    }
    if (!options.json && result.ok && !options.check) {
      const written = result.files.filter((f) => f.changed).map((f) => f.path);
      const scaffolded = result.scaffolded.length ? `; scaffolded ${result.scaffolded.join(', ')}` : '';
      const line = `${file}: ${written.length ? `wrote ${written.join(', ')}` : 'up to date'}${scaffolded} (${result.timings.total} ms)`;
      process.stdout.write(escapeControlCharacters(line) + '\n');
    }
  }
  if (options.check && drifted.includes(SCHEMA_FILE)) {
    findings.push({
      file: SCHEMA_FILE,
      code: 'CODEGEN_DRIFT',
      severity: 'error',
      path: '',
      message: `${SCHEMA_FILE} differs from the FlowSpec schema; run \`flowing codegen\``,
      generatedFile: SCHEMA_FILE,
    });
  }
  codegen.dispose();
  print(findings, options.json, { specs: report, drifted });
  if (!options.json && options.check && findings.every((f) => f.severity !== 'error')) {
    process.stdout.write(`${resolved.files.length} spec(s): generated code is up to date\n`);
  }
  return findings.some((f) => f.severity === 'error') ? EXIT_PROBLEMS : EXIT_OK;
}
