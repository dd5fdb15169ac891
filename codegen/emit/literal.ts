import { escapeControlCharacters, stringifyJsonSafely } from '@flowing/spec';
import { propertyKey } from '../names.ts';
import { array, object, type Doc } from './doc.ts';

/** Strings longer than this print as a `+` chain of pieces, so generated lines stay readable. */
const PIECE_LENGTH = 72;

/**
 * A string as TypeScript source: a JSON string (quotes, backslashes, C0 controls escaped) that also escapes what
 * JSON leaves raw and a reviewer cannot see: DEL, C1 controls, U+2028/U+2029 and bidi controls (CVE-2021-42574).
 * Long strings become a chain of pieces that concatenate to exactly the input, cut after a space where possible.
 */
export function stringDoc(value: string): Doc {
  if (value.length <= PIECE_LENGTH) return stringLiteral(value);
  const pieces: string[] = [];
  let rest = value;
  while (rest.length > PIECE_LENGTH) {
    let cut = rest.lastIndexOf(' ', PIECE_LENGTH);
    if (cut < PIECE_LENGTH / 2) cut = PIECE_LENGTH;
    else cut += 1;
    // Never split a surrogate pair: each piece stays well-formed text.
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    pieces.push(stringLiteral(rest.slice(0, cut)));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) pieces.push(stringLiteral(rest));
  return { kind: 'chain', operator: '+', operands: pieces, whole: stringLiteral(value) };
}

/** One string literal, on one line and with nothing invisible in it (see stringDoc). */
export function stringLiteral(value: string): string {
  return stringifyJsonSafely(value);
}

/**
 * A JSON value as a TypeScript expression doc. `__proto__` keys become computed keys (see propertyKey), so they
 * create own properties instead of setting the prototype; non-finite numbers print as null like JSON does.
 */
export function literalDoc(value: unknown): Doc {
  if (value === null || value === undefined) return value === null ? 'null' : 'undefined';
  if (typeof value === 'string') return stringDoc(value);
  if (typeof value === 'number') return Number.isFinite(value) ? (Object.is(value, -0) ? '0' : String(value)) : 'null';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return array(value.map(literalDoc));
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return object(entries.map(([key, v]) => ({ key: propertyKey(key), value: literalDoc(v) })));
}

/**
 * Spec text shown in a `//` comment, escaped as the CLI escapes what it prints: line terminators (U+2028/U+2029
 * included), other control characters, bidi controls and lone surrogates, so the comment can never end early and
 * let text become code, nor show a reviewer text in another order than the compiler reads it. Cut to `max` characters.
 */
export function commentText(text: string, max: number): string {
  const safe = escapeControlCharacters(text);
  if (safe.length <= max) return safe;
  let cut = Math.max(0, max - 1);
  const code = safe.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${safe.slice(0, cut)}…`;
}
