import type { SpecProblem } from './problems.ts';

/**
 * Characters that must never reach a terminal or a log line raw: C0 controls (line breaks, ESC, NUL ...), DEL, C1
 * controls (NEL, CSI ...), the Unicode line and paragraph separators, bidirectional formatting controls (they reorder
 * what a reader sees, CVE-2021-42574) and lone surrogates.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this pattern finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Surrogate}/gu;

const SHORT_ESCAPES: Record<string, string> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };

function unicodeEscape(char: string): string {
  return SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Replaces every control, separator and bidi-control character with a visible JSON-style escape (`\n`, `\u001b`,
 * `\u2028`), so the text prints as one line and sends nothing to the terminal. Backslashes are left alone, which makes
 * the function idempotent: escaping escaped text changes nothing.
 * @example escapeControlCharacters('line1\nline2\u001b[31m') // 'line1\\nline2\\u001b[31m'
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(UNSAFE, unicodeEscape);
}

/** Characters a URI fragment may hold as they are (RFC 3986: unreserved, sub-delims, `:`, `@`, `/`, `?`). */
const FRAGMENT_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?]$/;
const utf8 = new TextEncoder();

function percentEncode(char: string): string {
  const code = char.codePointAt(0)!;
  // A lone surrogate has no UTF-8 form (encodeURIComponent throws); its WTF-8 bytes keep it distinct from U+FFFD.
  const bytes =
    code >= 0xd800 && code <= 0xdfff ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)] : [...utf8.encode(char)];
  return bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/**
 * A JSON pointer in its URI-fragment form (RFC 6901 section 6): every character outside the fragment-safe ASCII set
 * (spaces, `%`, `#`, backslashes, controls, anything non-ASCII) is percent-encoded as UTF-8. Ordinary pointers
 * (`/states/fetch_order/invoke/onDone/0`) read unchanged; `decodeURIComponent` gives the exact pointer back, so a
 * state named `"line1\nline2"` is shown as `/states/line1%0Aline2` and never confused with another state.
 * @example pointerForDisplay('/states/line1\nline2') // '/states/line1%0Aline2'
 */
export function pointerForDisplay(pointer: string): string {
  let out = '';
  for (const char of pointer) out += FRAGMENT_SAFE.test(char) ? char : percentEncode(char);
  return out;
}

/** What a problem line needs: a spec problem, or any problem with the same fields (codegen's). */
export type PrintableProblem = Pick<SpecProblem, 'path' | 'message' | 'severity'> & { code: string };

/**
 * One problem as one line of text, `file#pointer CODE message` (no trailing newline): the file and message with
 * control characters escaped, the pointer in its URI-fragment form. The CLI and anything else that prints problems
 * use this, so a hostile name can neither split the line nor reach the terminal as an escape sequence.
 * @example formatProblemLine('machines/x/x.flow.json', problem)
 */
export function formatProblemLine(file: string, problem: PrintableProblem): string {
  const warning = problem.severity === 'warning' ? '(warning) ' : '';
  return `${escapeControlCharacters(file)}#${pointerForDisplay(problem.path)} ${escapeControlCharacters(problem.code)} ${warning}${escapeControlCharacters(problem.message)}`;
}

/**
 * A problem as machine-readable output: `path` stays the exact JSON pointer (it is data a tool looks elements up
 * by), `message` gets its control characters escaped as in text output, since consumers print it.
 */
export function problemForJson<T extends PrintableProblem>(problem: T): T {
  return { ...problem, message: escapeControlCharacters(problem.message) };
}

/** JSON.stringify leaves these raw; as `\u` escapes the output is the same JSON and carries no control character. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify` whose text holds no raw control character at all: JSON.stringify already escapes C0 controls and
 * lone surrogates; this also escapes DEL, C1 controls, U+2028/U+2029 and bidi controls. Parses to the same value.
 * @example process.stdout.write(stringifyJsonSafely({ problems }, 2) + '\n')
 */
export function stringifyJsonSafely(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_UNSAFE, unicodeEscape);
}
