// The one session-file parser: the runtime, the studio server and the studio app all read files with it, so its
// limit and its refusals are the same everywhere.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_SESSION_FILE_CHARS, parseSessionFile, type SessionFileProblem } from '@flowing/protocol';
import { createMemoryStore, createRuntime, exportSession } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { createVirtualClock } from '@flowing/runtime';

let text: string;

beforeAll(async () => {
  const store = createMemoryStore();
  const runtime = createRuntime({ machines: [orderSupport], store, clock: createVirtualClock() });
  const session = await runtime.createSession(orderSupport, { userId: 'u-ada' }, { sessionId: 'file-1' });
  await session.send({ type: 'USER_MESSAGE', text: 'where is my order A1001' });
  text = await exportSession(store, session.id, { now: 1_700_000_000_000 });
});

/** The SESSION_FILE_INVALID details of a refused text. */
function refusal(input: string): SessionFileProblem & { message: string } {
  try {
    parseSessionFile(input);
  } catch (error) {
    expect(error).toMatchObject({ code: 'SESSION_FILE_INVALID' });
    const { details, message } = error as { details: SessionFileProblem; message: string };
    return { ...details, message };
  }
  throw new Error('the file was accepted');
}

describe('parseSessionFile', () => {
  it('reads a file of exactly MAX_SESSION_FILE_CHARS characters and refuses one more: the limit counts characters, not bytes', () => {
    // Padded with no-break spaces (blank to the parser, two bytes each in UTF-8): twice the limit in bytes, still read.
    const atLimit = text + '\u00a0'.repeat(MAX_SESSION_FILE_CHARS - text.length);
    expect(atLimit.length).toBe(MAX_SESSION_FILE_CHARS);
    expect(new TextEncoder().encode(atLimit).length).toBeGreaterThan(MAX_SESSION_FILE_CHARS);
    expect(parseSessionFile(atLimit).header.sessionId).toBe('file-1');
    expect(refusal(`${atLimit} `)).toMatchObject({ line: 0, reason: 'file_too_large' });
  });

  it('refuses a flow spec, or an export pretty-printed over several lines, as another kind of file', () => {
    const spec = readFileSync(new URL('../../machines/order-support/order-support.flow.json', import.meta.url), 'utf8');
    expect(refusal(spec)).toMatchObject({ line: 1, reason: 'wrong_kind', message: expect.stringContaining('one JSON document') });
    const header = JSON.parse(text.split('\n')[0]!) as Record<string, unknown>;
    expect(refusal(JSON.stringify(header, null, 2))).toMatchObject({
      line: 1,
      reason: 'wrong_kind',
      message: expect.stringContaining('several lines'),
    });
  });

  it('refuses a file whose last line is cut off, or that has a header and nothing after it, as truncated', () => {
    const lines = text.trimEnd().split('\n');
    expect(refusal(text.slice(0, text.length - 20))).toMatchObject({ line: lines.length, reason: 'truncated' });
    const header = { ...(JSON.parse(lines[0]!) as Record<string, unknown>), events: 0, journal: 0 };
    expect(refusal(`${JSON.stringify(header)}\n`)).toMatchObject({ line: 2, reason: 'truncated' });
  });

  it('refuses a line that is not JSON before the last one as not_json, naming it', () => {
    const lines = text.trimEnd().split('\n');
    lines[2] = '<html>';
    expect(refusal(lines.join('\n'))).toMatchObject({ line: 3, reason: 'not_json', message: expect.stringMatching(/^line 3: /) });
  });
});
