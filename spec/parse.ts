import { visit, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { pointer, problem, type SpecProblem } from './problems.ts';
import { validateSpec, type ValidateOptions, type ValidationResult } from './validate.ts';

/**
 * Parses the text of a `.flow.json` file and validates it. Unlike `JSON.parse`, it reports duplicate keys
 * (which JSON.parse silently resolves to the last one) and never throws.
 * @example const { ok, spec, problems } = parseSpecText(await readFile(file, 'utf8'), { tools })
 */
export function parseSpecText(text: string, options: ValidateOptions = {}): ValidationResult {
  const depth = jsonNestingDepth(text, MAX_DEPTH);
  if (depth > MAX_DEPTH) {
    return {
      spec: undefined,
      problems: [problem('SPEC_JSON_SYNTAX', '', `the document nests deeper than ${MAX_DEPTH} levels`)],
      ok: false,
    };
  }
  const syntax = scanJson(text);
  if (syntax.length > 0) return { spec: undefined, problems: syntax, ok: false };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { spec: undefined, problems: [problem('SPEC_JSON_SYNTAX', '', (err as Error).message)], ok: false };
  }
  return validateSpec(value, options);
}

const MAX_DEPTH = 200;

/**
 * Nesting depth of objects and arrays in JSON text, ignoring brackets inside strings; never recursive, and it stops
 * counting once the depth passes `stopAbove`.
 */
export function jsonNestingDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
      if (deepest > stopAbove) return deepest;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

function scanJson(text: string): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const stack: Array<{ keys: Set<string>; path: Array<string | number>; index: number; isArray: boolean }> = [];
  let pendingKey: string | undefined;
  const childPath = (): Array<string | number> => {
    const top = stack[stack.length - 1];
    if (!top) return [];
    if (top.isArray) return [...top.path, top.index++];
    return [...top.path, pendingKey ?? ''];
  };
  const errors: ParseError[] = [];
  visit(
    text,
    {
      onObjectBegin: () => {
        stack.push({ keys: new Set(), path: childPath(), index: 0, isArray: false });
      },
      onObjectProperty: (key) => {
        const top = stack[stack.length - 1]!;
        if (top.keys.has(key))
          problems.push(problem('SPEC_DUPLICATE_KEY', pointer(...top.path, key), `key "${key}" appears twice in this object; remove one`));
        top.keys.add(key);
        pendingKey = key;
      },
      onObjectEnd: () => {
        stack.pop();
      },
      onArrayBegin: () => {
        stack.push({ keys: new Set(), path: childPath(), index: 0, isArray: true });
      },
      onArrayEnd: () => {
        stack.pop();
      },
      onLiteralValue: () => {
        childPath();
      },
      onError: (error, offset) => {
        errors.push({ error, offset, length: 0 });
      },
    },
    { allowTrailingComma: false, disallowComments: true },
  );
  for (const { error, offset } of errors) {
    const { line, column } = lineColumn(text, offset);
    problems.push(problem('SPEC_JSON_SYNTAX', '', `${printParseErrorCode(error)} at line ${line}, column ${column}`));
  }
  return problems;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}
