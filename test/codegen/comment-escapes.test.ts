import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate, loadToolCatalog, type ToolCatalog } from '@flowing/codegen';
import { parseSpecText } from '@flowing/spec';
import { REPO_DIR } from '../helpers/project.ts';

let tools: ToolCatalog;
beforeAll(async () => {
  tools = await loadToolCatalog(REPO_DIR);
});

/** Characters that end a `//` comment or reorder what a reviewer sees; none may appear raw in generated code. */
const INVISIBLE = /[\r\u2028\u2029\u0085\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** A module whose guard and assignment are spec text that differs from the code, so both get a `//` comment. */
function moduleWith(guard: string, value: string): string {
  const spec = {
    specVersion: 1,
    id: 'comment-escapes',
    context: { s: { type: 'string', optional: true }, t: { type: 'string', optional: true } },
    events: { GO: { text: { type: 'string' } } },
    initial: 'idle',
    states: {
      idle: { on: { GO: [{ guard, target: 'done', assign: { t: value } }, { target: 'done' }] } },
      done: { type: 'final' },
    },
  };
  const parsed = parseSpecText(JSON.stringify(spec), { tools });
  expect(parsed.problems).toEqual([]);
  return generate(parsed.spec!, { tools })[0]!.text;
}

/** The single-line comments of a module, each with the character that ended it. */
function comments(text: string): Array<{ comment: string; endedBy: string }> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const out: Array<{ comment: string; endedBy: string }> = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia)
      out.push({ comment: scanner.getTokenText(), endedBy: text[scanner.getTokenEnd()] ?? '' });
  }
  return out;
}

// Each payload is code after a line terminator: a comment ended early would run it (or break the module).
const HOSTILE: Array<[string, string, string]> = [
  ['U+2028 in a single-quoted string', "context.s == 'a\u2028globalThis.pwned = 1; //'", "'x\u2028globalThis.pwned = 2; //'"],
  ['U+2029 in a single-quoted string', "event.text == 'b\u2029throw new Error(); //'", "'y\u2029throw new Error(); //'"],
  ['template-like text and a comment end', "context.s == '${context.t}*/\u2028}); ({'", "'`${context.s}`*/' + '\u2029'"],
  ['bidi controls', "context.s == '\u202eadmin\u2066' || context.t == 'x\u202c'", "'\u2067\u202a' + context.s"],
  ['a lone CR and NEL', "context.s == 'a\rb\u0085c'", "'c\r\u0085d'"],
];

describe('generated comments show spec text and can never be ended early', () => {
  it.each(HOSTILE)('escapes %s in the comment and the literal, and the module parses as the same statements', (_name, guard, value) => {
    const text = moduleWith(guard, value);
    // The same expressions with harmless strings in the quotes.
    const benign = moduleWith(guard.replace(/'[^']*'/g, "'a'"), value.replace(/'[^']*'/g, "'b'"));
    const specComments = comments(text).filter((c) => !c.comment.startsWith('// Generated') && !c.comment.startsWith('// Change'));
    expect(specComments.length).toBe(2);
    for (const { comment, endedBy } of specComments) {
      expect(endedBy, comment).toBe('\n');
      expect(comment).not.toMatch(INVISIBLE);
    }
    expect(text).not.toMatch(INVISIBLE);
    // Compiled: no syntax error, and the same top-level statements as the module without hostile text.
    const compiled = ts.transpileModule(text, { reportDiagnostics: true, compilerOptions: { target: ts.ScriptTarget.ES2022 } });
    expect(compiled.diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    const kinds = (source: string) =>
      ts.createSourceFile('m.ts', source, ts.ScriptTarget.Latest).statements.map((s) => ts.SyntaxKind[s.kind]);
    expect(kinds(text)).toEqual(kinds(benign));
  });

  it('keeps the exact values: the escaped literals evaluate to the spec strings', () => {
    const text = moduleWith("context.s == 'a\u2028b\u202e'", "'x\u2029y'");
    expect(text).toContain('"a\\u2028b\\u202e"');
    expect(JSON.parse('"a\\u2028b\\u202e"')).toBe('a\u2028b\u202e');
    expect(text).toContain("// context.s == 'a\\u2028b\\u202e'");
  });
});
