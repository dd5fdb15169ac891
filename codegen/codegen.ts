import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { flowSpecJsonSchema, parseSpecText, type FlowSpec, type ToolInvokeSpec } from '@flowing/spec';
import { agentToolName, listStates } from '@flowing/spec';
import { GeneratedCodeChecker } from './checker.ts';
import { generate } from './generate.ts';
import { mcpModulesFor } from './mcp/modules.ts';
import { machineNames } from './names.ts';
import type { Problem } from './problems.ts';
import { explainUnknownTools } from './import-failure.ts';
import { implText, toolStub, type ToolStub } from './scaffold.ts';
import { loadToolCatalog, type ToolCatalog } from './tool-catalog.ts';
import { loadMachineCatalog, type MachineCatalog } from './machine-catalog.ts';
import { writeAll } from './write.ts';

export { writeFileAtomic } from './write.ts';

export interface CodegenFile {
  path: string;
  text: string;
  /** What is on disk now (undefined when the file does not exist). */
  previous: string | undefined;
  changed: boolean;
}

export interface CodegenResult {
  ok: boolean;
  specId: string | undefined;
  problems: Problem[];
  files: CodegenFile[];
  /** Files created by scaffolding (tool stubs, impl stubs), relative paths. */
  scaffolded: string[];
  timings: Record<string, number>;
  /**
   * `checked` when the generated code was type-checked, `reused` when the same code had checked clean and nothing it
   * reads changed since (so it was not checked again); absent when there was no type check.
   */
  typeCheck?: 'checked' | 'reused';
}

export interface GenerateOptions {
  /** Write the generated files when the spec is valid and the code type-checks. Default true. */
  write?: boolean;
  /** Skip the type check (used by `--check`, which only compares text). */
  typeCheck?: boolean;
  tools?: ToolCatalog;
  /**
   * The spec's text to generate from instead of the file's: an unsaved edit (the studio's live type check, or a
   * Generate that saves the spec only when its code type-checks). The file is neither read nor written.
   */
  text?: string;
  /** The project's machines (default: read from machines/), for checking and typing machine invokes. */
  machines?: MachineCatalog;
}

export interface Codegen {
  /** Validates, generates and type-checks one spec file. */
  generate(specFile: string, options?: GenerateOptions): Promise<CodegenResult>;
  dispose(): void;
}

async function readIfExists(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** The JSON Schema file every spec points at with `$schema`. */
export function flowSchemaText(): string {
  return JSON.stringify(flowSpecJsonSchema(), null, 2) + '\n';
}

export interface CodegenOptions {
  rootDir: string;
  /**
   * Keep what type-checked clean in the project's node_modules/.cache, so another process (the next `flowing
   * codegen`) does not check unchanged code again. Default false: a long-lived generator remembers it in memory.
   */
  persistTypeCheck?: boolean;
}

/**
 * Creates a code generator bound to a project root. It keeps one ts-morph Project for its lifetime, so repeated
 * generation (the studio's Generate button) type-checks warm.
 * @example const codegen = createCodegen({ rootDir: process.cwd() }); await codegen.generate('machines/x/x.flow.json')
 */
export function createCodegen(options: CodegenOptions): Codegen {
  const rootDir = resolve(options.rootDir);
  let checker: GeneratedCodeChecker | undefined;
  const rel = (path: string) => relative(rootDir, path).split('\\').join('/');

  async function run(specFile: string, opts: GenerateOptions = {}): Promise<CodegenResult> {
    const write = opts.write ?? true;
    const timings: Record<string, number> = {};
    const started = performance.now();
    const lap = (name: string, since: number) => {
      timings[name] = Math.round(performance.now() - since);
      return performance.now();
    };
    const specPath = resolve(rootDir, specFile);
    const fail = (problems: Problem[], specId?: string): CodegenResult => ({
      ok: false,
      specId,
      problems,
      files: [],
      scaffolded: [],
      timings,
    });
    const text = opts.text ?? (await readIfExists(specPath));
    if (text === undefined)
      return fail([{ code: 'CODEGEN_READ_FAILED', severity: 'error', path: '', message: `cannot read ${rel(specPath)}` }]);

    let t = performance.now();
    const toolProblems: Problem[] = [];
    const failedTools = new Set<string>();
    const onError = (file: string, error: unknown) => {
      failedTools.add(file);
      toolProblems.push({
        code: 'CODEGEN_TOOL_LOAD_FAILED',
        severity: 'warning',
        path: '',
        message: `${file} could not be imported: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      });
    };
    let tools = opts.tools ?? (await loadToolCatalog(rootDir, { onError }));
    t = lap('loadTools', t);
    const machines = opts.machines ?? (await loadMachineCatalog(rootDir));
    // A budget counts what the machines this one invokes cost: the catalog resolves them, as `flowing validate` does.
    const resolveMachine = (id: string) => (Object.hasOwn(machines, id) ? machines[id] : undefined);
    let validation = parseSpecText(text, { tools, machines, resolveMachine });
    // Tools the spec names but tools/ lacks get stubs, in memory until the whole run has succeeded.
    const stubs: ToolStub[] = [];
    const onlyUnknownTools =
      !validation.ok && validation.problems.filter((p) => p.severity === 'error').every((p) => p.code === 'SPEC_UNKNOWN_TOOL');
    if (onlyUnknownTools && write && validation.spec) {
      for (const [name, fields] of missingTools(validation.spec, tools)) {
        const stub = toolStub(name, fields);
        // A file that exists but did not load (reported above) is the author's: never replaced by a stub.
        if ((await readIfExists(join(rootDir, stub.path))) === undefined) stubs.push(stub);
      }
      tools = { ...tools, ...Object.fromEntries(stubs.map((stub) => [stub.entry.name, stub.entry])) };
      validation = parseSpecText(text, { tools, machines, resolveMachine });
    }
    t = lap('validate', t);
    const spec = validation.spec;
    if (!validation.ok || !spec) return fail([...toolProblems, ...explainUnknownTools(validation.problems, failedTools)], spec?.id);
    const warnings: Problem[] = [...toolProblems, ...validation.problems];

    const specDir = dirname(specPath);
    const names = machineNames(spec.id);
    const generated = [
      ...generate(spec, { tools, machineDir: rel(specDir), machines }),
      ...(await mcpModulesFor(spec, tools, rootDir)),
    ].map((file) => ({ regions: [], ...file, absolute: join(rootDir, file.path) }));
    const implPath = join(specDir, names.implFile);
    const existingImpl = await readIfExists(implPath);
    const newImpl = implText(spec.id, existingImpl, Object.keys(spec.guards ?? {}), Object.keys(spec.actions ?? {}));
    t = lap('generate', t);

    const files: CodegenFile[] = [];
    for (const file of generated) {
      const previous = await readIfExists(file.absolute);
      files.push({ path: rel(file.absolute), text: file.text, previous, changed: previous !== file.text });
    }
    const problems: Problem[] = [...warnings];
    let typeCheck: CodegenResult['typeCheck'];
    if (opts.typeCheck ?? true) {
      checker ??= new GeneratedCodeChecker(rootDir, { persist: options.persistTypeCheck });
      const checked = [
        ...stubs.map((stub) => ({ path: join(rootDir, stub.path), text: stub.text, displayPath: stub.path })),
        ...generated.map((f) => ({ path: f.absolute, text: f.text, regions: f.regions, displayPath: rel(f.absolute) })),
        ...(newImpl !== undefined || existingImpl !== undefined
          ? [{ path: implPath, text: newImpl ?? existingImpl!, displayPath: rel(implPath) }]
          : []),
      ];
      const check = await checker.check(checked);
      problems.push(...check.problems);
      typeCheck = check.reused ? 'reused' : 'checked';
      t = lap('typeCheck', t);
    }
    const ok = !problems.some((p) => p.severity === 'error');
    const scaffolded: string[] = [];
    if (write && ok) {
      // All or nothing: a refused run leaves no stub, impl or generated file behind.
      const writes = [
        ...stubs.map((stub) => ({ path: join(rootDir, stub.path), text: stub.text })),
        ...(newImpl !== undefined ? [{ path: implPath, text: newImpl }] : []),
        ...generated
          .filter((file) => files.find((f) => f.path === rel(file.absolute))!.changed)
          .map((file) => ({ path: file.absolute, text: file.text })),
      ];
      await writeAll(writes);
      scaffolded.push(...stubs.map((stub) => stub.path), ...(newImpl !== undefined ? [rel(implPath)] : []));
      lap('write', t);
    }
    timings.total = Math.round(performance.now() - started);
    return { ok, specId: spec.id, problems, files, scaffolded, timings, ...(typeCheck ? { typeCheck } : {}) };
  }

  return {
    generate: run,
    dispose() {
      checker = undefined;
    },
  };
}

/** Tools an otherwise valid spec names that tools/ lacks, with the input fields its mappings use. */
function missingTools(spec: FlowSpec, tools: ToolCatalog): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const { spec: state } of listStates(spec)) {
    const invoke = state.invoke;
    if (!invoke) continue;
    const names = 'tool' in invoke ? [invoke.tool] : 'llm' in invoke ? (invoke.tools ?? []).map(agentToolName) : [];
    for (const name of names) {
      if (tools[name]) continue;
      const fields = new Set(missing.get(name) ?? []);
      if ('tool' in invoke) Object.keys((invoke as ToolInvokeSpec).input ?? {}).forEach((f) => fields.add(f));
      missing.set(name, [...fields].sort());
    }
  }
  return missing;
}
