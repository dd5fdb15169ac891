import { describe, expect, it } from 'vitest';
import { escapeControlCharacters, formatProblemLine, pointerForDisplay, problemForJson, stringifyJsonSafely } from '../../spec/index.ts';

/** Every character class a problem line must never carry raw. */
const UNSAFE_SAMPLES: Array<[string, string]> = [
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\u0000', '\\u0000'],
  ['\u001b', '\\u001b'],
  ['\u007f', '\\u007f'],
  ['\u0085', '\\u0085'],
  ['\u009b', '\\u009b'],
  ['\u2028', '\\u2028'],
  ['\u2029', '\\u2029'],
  ['\u202e', '\\u202e'],
  ['\u2066', '\\u2066'],
  ['\u200f', '\\u200f'],
  ['\ud800', '\\ud800'],
];

/** True when the text holds a C0 control, DEL, a C1 control, a line/paragraph separator or a bidi control. */
function hasUnsafeCharacter(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this pattern finds
  return /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(text);
}

describe('escapeControlCharacters', () => {
  for (const [raw, escaped] of UNSAFE_SAMPLES) {
    it(`shows U+${raw.charCodeAt(0).toString(16).padStart(4, '0')} as ${escaped}`, () => {
      expect(escapeControlCharacters(`a${raw}b`)).toBe(`a${escaped}b`);
    });
  }

  it('leaves printable text alone, backslashes, quotes and non-Latin letters included', () => {
    const text = 'state "a\\nb" — Grüße, 注文 🚚 \'x\' ~ % #';
    expect(escapeControlCharacters(text)).toBe(text);
  });

  it('is idempotent, so text escaped once can pass through it again unchanged', () => {
    const once = escapeControlCharacters(UNSAFE_SAMPLES.map(([raw]) => raw).join('x'));
    expect(hasUnsafeCharacter(once)).toBe(false);
    expect(escapeControlCharacters(once)).toBe(once);
  });
});

describe('pointerForDisplay', () => {
  it('shows ordinary pointers unchanged', () => {
    for (const pointer of [
      '',
      '/states/fetch_order/invoke/onDone/0/guard',
      '/layout/active.fetch',
      '/states/a~1b~0c',
      '/events/USER_MESSAGE',
    ]) {
      expect(pointerForDisplay(pointer)).toBe(pointer);
    }
  });

  it('percent-encodes line breaks, escapes, spaces and non-ASCII so decodeURIComponent gives the exact pointer back', () => {
    const pointers = [
      '/states/line1\nline2',
      '/states/\u001b[31mred',
      '/states/a b',
      '/states/50%',
      '/states/a#b',
      '/states/back\\slash',
      '/states/\u2028\u0000\u007f\u009b\u202e',
      '/states/Grüße 注文 🚚',
    ];
    for (const pointer of pointers) {
      const shown = pointerForDisplay(pointer);
      expect(shown, JSON.stringify(pointer)).toMatch(/^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/);
      expect(decodeURIComponent(shown)).toBe(pointer);
    }
    expect(pointerForDisplay('/states/line1\nline2')).toBe('/states/line1%0Aline2');
  });

  it("keeps pointers that differ distinct, even one that spells out another one's escape", () => {
    const shown = ['/states/a\nb', '/states/a%0Ab', '/states/a\\nb', '/states/a b', '/states/a%20b'].map(pointerForDisplay);
    expect(new Set(shown).size).toBe(shown.length);
  });

  it('encodes a lone surrogate instead of throwing', () => {
    expect(pointerForDisplay('/states/\ud800')).toBe('/states/%ED%A0%80');
  });
});

describe('formatProblemLine and the JSON form', () => {
  // Lone surrogates aside: they have no UTF-8 form, so decodeURIComponent cannot give them back (see the test above).
  const hostile = `x${UNSAFE_SAMPLES.map(([raw]) => raw)
    .filter((raw) => !/^[\ud800-\udfff]$/.test(raw))
    .join('')}y`;
  const problem = {
    code: 'SPEC_UNKNOWN_TARGET',
    severity: 'warning' as const,
    path: `/states/${hostile}`,
    message: `target '${hostile}' is unknown`,
  };

  it('prints one line with no unsafe character, the pointer decoding to the exact path', () => {
    const line = formatProblemLine(`machines/a${hostile}/a.flow.json`, problem);
    expect(hasUnsafeCharacter(line)).toBe(false);
    expect(line).toMatch(/^machines\/a.*\/a\.flow\.json#\S+ SPEC_UNKNOWN_TARGET \(warning\) target '.*' is unknown$/);
    const pointer = line.slice(line.indexOf('#') + 1, line.indexOf(' '));
    expect(decodeURIComponent(pointer)).toBe(problem.path);
  });

  it('keeps the exact path in JSON, escapes the message, and writes JSON text with no raw control character', () => {
    const text = stringifyJsonSafely({ problems: [problemForJson(problem)] }, 2);
    expect(hasUnsafeCharacter(text.replace(/\n/g, ''))).toBe(false);
    const parsed = JSON.parse(text).problems[0];
    expect(parsed.path).toBe(problem.path);
    expect(hasUnsafeCharacter(parsed.message)).toBe(false);
    expect(parsed.message).toBe(escapeControlCharacters(problem.message));
  });
});
