/** The outcome of reading model-written JSON: the value, or why it could not be read. */
export type LenientJsonResult = { ok: true; value: unknown; repaired: boolean } | { ok: false; message: string };

/**
 * Parses JSON written by a model, repairing the common slips when strict parsing fails: a code fence around it,
 * prose before or after the object, trailing commas, single-quoted strings and unquoted keys. A repair is kept
 * only when the result parses as strict JSON, so text whose meaning is ambiguous is refused, never guessed.
 * @example parseLenientJson("```json\n{'a': 1,}\n```") // { ok: true, value: { a: 1 }, repaired: true }
 */
export function parseLenientJson(text: string): LenientJsonResult {
  const strict = tryParse(text);
  if (strict.ok) return { ok: true, value: strict.value, repaired: false };
  const firstError = strict.message;

  const candidates = new Set<string>();
  const unfenced = stripFence(text.trim());
  candidates.add(unfenced);
  const enclosed = enclosingValue(unfenced);
  if (enclosed !== undefined) candidates.add(enclosed);
  for (const candidate of candidates) {
    const direct = tryParse(candidate);
    if (direct.ok) return { ok: true, value: direct.value, repaired: true };
    const normalised = normaliseSyntax(candidate);
    if (normalised === undefined) continue;
    const fixed = tryParse(normalised);
    if (fixed.ok) return { ok: true, value: fixed.value, repaired: true };
  }
  return { ok: false, message: firstError };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

function stripFence(text: string): string {
  const fenced = /^```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text);
  return fenced ? fenced[1]!.trim() : text;
}

/** The span from the first `{` or `[` to the matching last bracket, for answers wrapped in prose. */
function enclosingValue(text: string): string | undefined {
  const start = text.search(/[[{]/);
  if (start < 0) return undefined;
  const close = text[start] === '{' ? '}' : ']';
  const end = text.lastIndexOf(close);
  return end > start ? text.slice(start, end + 1) : undefined;
}

/**
 * Rewrites outside-of-string syntax slips into strict JSON: single-quoted strings become double-quoted,
 * unquoted object keys are quoted and commas before a closing bracket are dropped. Returns undefined when a
 * string is left unterminated.
 */
function normaliseSyntax(text: string): string | undefined {
  const trailingComma = /,\s*(?=[}\]])/y;
  const bareKey = /[A-Za-z_$][A-Za-z0-9_$]*(?=\s*:)/y;
  let out = '';
  let lastSignificant = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const read = readString(text, i, ch);
      if (read === undefined) return undefined;
      out += read.json;
      lastSignificant = '"';
      i = read.end;
      continue;
    }
    if (ch === ',') {
      trailingComma.lastIndex = i;
      if (trailingComma.test(text)) {
        i = trailingComma.lastIndex;
        continue;
      }
    }
    if ((lastSignificant === '{' || lastSignificant === ',') && /[A-Za-z_$]/.test(ch)) {
      bareKey.lastIndex = i;
      const key = bareKey.exec(text);
      if (key) {
        out += JSON.stringify(key[0]);
        lastSignificant = '"';
        i = bareKey.lastIndex;
        continue;
      }
    }
    out += ch;
    if (!/\s/.test(ch)) lastSignificant = ch;
    i += 1;
  }
  return out;
}

/** Reads a string literal opened by `quote` at `start`; returns it re-encoded as a JSON string. */
function readString(text: string, start: number, quote: string): { json: string; end: number } | undefined {
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\') {
      const next = text[i + 1];
      if (next === undefined) return undefined;
      if (next === "'") value += "'";
      else {
        const decoded = tryParse(`"\\${next}${next === 'u' ? text.slice(i + 2, i + 6) : ''}"`);
        if (!decoded.ok) return undefined;
        value += decoded.value as string;
        if (next === 'u') i += 4;
      }
      i += 2;
      continue;
    }
    if (ch === quote) return { json: JSON.stringify(value), end: i + 1 };
    value += ch;
    i += 1;
  }
  return undefined;
}
