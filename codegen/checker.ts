import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Project, ts, type SourceFile } from 'ts-morph';
import { CheckCache, checkCacheFile } from './check-cache.ts';
import { findRegions, type SourceRegion } from './emit/writer.ts';
import type { Problem } from './problems.ts';

export interface CheckedFile {
  /** Absolute path where the file lives (or will live). */
  path: string;
  text: string;
  /** Spans of the text and the spec pointers they came from; absent for hand-written files. */
  regions?: SourceRegion[];
  /** Relative path for messages. */
  displayPath: string;
}

/**
 * Type-checks generated modules in one long-lived ts-morph Project with the project's tsconfig. Keep one instance:
 * a warm check is several times faster than a cold one, since lib files and node_modules types stay parsed. Code
 * that checked clean is not checked again while nothing it depends on changed (see CheckCache).
 */
export class GeneratedCodeChecker {
  private readonly project: Project;
  /** Files outside node_modules the last program read (the generated code's imports), and their last seen mtimes. */
  private dependencies: string[] = [];
  private readonly seen = new Map<string, number>();
  private readonly cache: CheckCache;
  /** What every check's cache key starts with: the compiler, its options and the project's configuration files. */
  private readonly setting: string[];

  /** @param options.persist keep the clean results in the project's node_modules/.cache (default: in memory only). */
  constructor(rootDir: string, options: { persist?: boolean } = {}) {
    this.cache = new CheckCache(options.persist ? checkCacheFile(rootDir) : undefined);
    this.project = new Project({
      tsConfigFilePath: join(rootDir, 'tsconfig.json'),
      skipAddingFilesFromTsConfig: true,
      // Generated code needs neither DOM nor Vite types; leaving them out makes every check cheaper.
      // Node's types only when the project has them (a new project may not).
      compilerOptions: { lib: ['lib.es2023.d.ts'], types: hasNodeTypes(rootDir) ? ['node'] : [] },
    });
    this.setting = [
      ts.version,
      JSON.stringify(this.project.getCompilerOptions()),
      ...['tsconfig.json', 'package.json'].map((file) => textOf(join(rootDir, file))),
    ];
  }

  /**
   * Checks the files (in memory; nothing is written) and maps each diagnostic back to a spec pointer; `reused` when
   * the same files checked clean before and nothing they read has changed since.
   */
  async check(files: readonly CheckedFile[]): Promise<{ problems: Problem[]; reused: boolean }> {
    const key = CheckCache.key([...this.setting, ...files.flatMap((f) => [f.path, f.text])]);
    if (await this.cache.isClean(key)) return { problems: [], reused: true };
    const problems = this.checkNow(files);
    if (problems.length === 0) await this.cache.remember(key, this.readFiles(files));
    return { problems, reused: false };
  }

  private checkNow(files: readonly CheckedFile[]): Problem[] {
    const checked = new Set(files.map((f) => f.path));
    this.refreshHandWritten(checked);
    const sources = files.map((file) => ({ file, source: this.project.createSourceFile(file.path, file.text, { overwrite: true }) }));
    const problems: Problem[] = [];
    for (const { file, source } of sources) {
      for (const diagnostic of source.getPreEmitDiagnostics()) {
        if (diagnostic.getCategory() !== ts.DiagnosticCategory.Error) continue;
        const start = diagnostic.getStart() ?? 0;
        const { line, column } = source.getLineAndColumnAtPos(start);
        const message = conciseMessage(diagnostic.compilerObject.messageText);
        const regions = file.regions ? findRegions(file.regions, start) : [];
        for (const path of regions.length > 0 ? regions.map((r) => r.pointer) : ['']) {
          problems.push({
            code: 'CODEGEN_TYPE_ERROR',
            severity: 'error',
            path,
            message: `TS${diagnostic.getCode()} ${message} (${file.displayPath}:${line}:${column})`,
            generatedFile: file.displayPath,
          });
        }
      }
    }
    this.recordDependencies(checked);
    return problems;
  }

  /**
   * Re-reads the files of the project that changed on disk since the last check: the generated code's imports (tools,
   * impl, and what they import) are cached by the Project like its own files, and a long-lived checker (the studio's)
   * must see a tool edited meanwhile. Files under node_modules and TypeScript's lib files are never re-read.
   */
  private refreshHandWritten(skip: Set<string>): void {
    for (const path of this.dependencies) {
      if (skip.has(path)) continue;
      const mtime = mtimeOf(path);
      if (mtime === this.seen.get(path)) continue;
      this.seen.set(path, mtime);
      const source = this.project.getSourceFile(path);
      if (source) refresh(source);
    }
  }

  /** Every file the last program read besides the checked ones and TypeScript's own lib files. */
  private readFiles(files: readonly CheckedFile[]): string[] {
    const checked = new Set(files.map((f) => f.path));
    return this.project
      .getProgram()
      .compilerObject.getSourceFiles()
      .filter((file) => !checked.has(file.fileName) && !file.hasNoDefaultLib)
      .map((file) => file.fileName);
  }

  /** Remembers the files outside node_modules the last program read, with their modification times. */
  private recordDependencies(skip: Set<string>): void {
    this.dependencies = [];
    for (const file of this.project.getProgram().compilerObject.getSourceFiles()) {
      const path = file.fileName;
      if (skip.has(path) || path.includes('/node_modules/') || file.hasNoDefaultLib) continue;
      this.dependencies.push(path);
      if (!this.seen.has(path)) this.seen.set(path, mtimeOf(path));
    }
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

function textOf(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function hasNodeTypes(rootDir: string): boolean {
  try {
    createRequire(join(rootDir, 'package.json')).resolve('@types/node/package.json');
    return true;
  } catch {
    return false;
  }
}

/** The head of a diagnostic chain and its deepest cause: the part a person needs, without TypeScript's full type dump. */
function conciseMessage(text: string | ts.DiagnosticMessageChain): string {
  if (typeof text === 'string') return text;
  let leaf = text;
  while (leaf.next && leaf.next.length > 0) leaf = leaf.next[0]!;
  return leaf === text
    ? text.messageText
    : `${text.messageText.length > 200 ? `${text.messageText.slice(0, 200)}…` : text.messageText} — ${leaf.messageText}`;
}

function refresh(source: SourceFile): void {
  try {
    source.refreshFromFileSystemSync();
  } catch {
    source.forget();
  }
}
