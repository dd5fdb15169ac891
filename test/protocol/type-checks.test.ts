// What the protocol's types promise is checked by the compiler: these tests compile small files that break a promise
// (and one that keeps them all) with the project's own compiler options, and read the errors.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_DIR } from '../helpers/project.ts';

const SNIPPETS: Record<string, (root: string) => string> = {
  control: (root) => `
import { FlowingError, type RouteKey } from '@flowing/protocol';
import { answer, type RouteHandler, type RouteHandlers } from '${root}/runtime/server/route.ts';
import { hasCode } from '${root}/studio/src/api-error.ts';
declare const relayed: string;
declare const handlers: RouteHandlers;
export const declared = new FlowingError('SESSION_NOT_FOUND', 'no session');
export const fromTool = new FlowingError(relayed, 'a code a tool declared');
export const machines: RouteHandler<'GET /machines'> = (c) => answer(c, { machines: [] });
export const all: Record<RouteKey, unknown> = handlers;
export const conflict = (error: unknown) => hasCode(error, 'STUDIO_CONFLICT');
`,
  'wrong-answer': (root) => `
import { answer, type RouteHandler } from '${root}/runtime/server/route.ts';
export const machines: RouteHandler<'GET /machines'> = (c) => answer(c, { machines: 'none' });
`,
  'missing-route': (root) => `
import type { RouteHandlers } from '${root}/runtime/server/route.ts';
declare const all: RouteHandlers;
const { 'GET /sessions/:id/xstate': _left, ...rest } = all;
export const handlers: RouteHandlers = rest;
`,
  'misspelt-code': () => `
import { FlowingError } from '@flowing/protocol';
export const error = new FlowingError('SESION_NOT_FOUND', 'no session');
`,
  'misspelt-client-code': (root) => `
import { hasCode } from '${root}/studio/src/api-error.ts';
export const conflict = (error: unknown) => hasCode(error, 'STUDIO_CONFLCT');
`,
};

let dir: string;
let errors: Record<string, string[]>;

beforeAll(async () => {
  // Inside the repository (test/artifacts is not part of the project) so the packages resolve as they do for tests.
  await mkdir(join(REPO_DIR, 'test/artifacts'), { recursive: true });
  dir = await mkdtemp(join(REPO_DIR, 'test/artifacts/type-checks-'));
  const root = relative(dir, REPO_DIR).replace(/\/$/, '');
  const files: string[] = [];
  for (const [name, source] of Object.entries(SNIPPETS)) {
    const file = join(dir, `${name}.ts`);
    await writeFile(file, source(root));
    files.push(file);
  }
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO_DIR, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  errors = Object.fromEntries(Object.keys(SNIPPETS).map((name) => [name, [] as string[]]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const name = diagnostic.file ? relative(dir, diagnostic.file.fileName).replace(/\.ts$/, '') : '(global)';
    (errors[name] ??= []).push(`TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  }
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the compiler holds code to the protocol', () => {
  it("compiles declared codes, relayed codes, a handler answering its route's type and a complete route table", () => {
    expect(errors.control).toEqual([]);
    expect(Object.keys(errors).sort()).toEqual(Object.keys(SNIPPETS).sort());
  });

  it('refuses a handler that answers another type than its route declares', () => {
    expect(errors['wrong-answer']).toHaveLength(1);
    expect(errors['wrong-answer']![0]).toMatch(
      /^TS2322: Type 'Answer<\{ machines: string; \}>' is not assignable to type 'Answer<MachineList> \| Promise<Answer<MachineList>>'/,
    );
    expect(errors['wrong-answer']![0]).toContain("Type 'string' is not assignable to type 'RuntimeMachine[]'");
  });

  it('refuses a route table that leaves a route of RuntimeRoutes out', () => {
    expect(errors['missing-route']).toHaveLength(1);
    expect(errors['missing-route']![0]).toMatch(
      /^TS2741: Property '"GET \/sessions\/:id\/xstate"' is missing in type .* but required in type 'RouteHandlers'/,
    );
  });

  it('refuses a misspelt literal error code, naming the known ones', () => {
    expect(errors['misspelt-code']).toHaveLength(1);
    expect(errors['misspelt-code']![0]).toMatch(
      /^TS2345: Argument of type '"SESION_NOT_FOUND"' is not assignable to parameter of type 'KnownErrorCode'/,
    );
  });

  it("refuses a misspelt code where the studio tests a failure's code", () => {
    expect(errors['misspelt-client-code']).toHaveLength(1);
    expect(errors['misspelt-client-code']![0]).toMatch(/^TS2345: Argument of type '"STUDIO_CONFLCT"' is not assignable to parameter/);
  });
});
