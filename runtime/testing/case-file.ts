import { readFile } from 'node:fs/promises';
import { TestingError } from './errors.ts';

/** The case file format this version writes and reads. */
export const CASE_FORMAT_VERSION = 1;

/** First line of a case file. */
export interface CaseHeader {
  type: 'case';
  formatVersion: number;
  machineId: string;
  /** The spec hash of the machine the case was recorded (or last accepted) on; informative, replays run on today's. */
  specHash: string;
  name: string;
  /** Where it came from: `run`, `service`, `inspector`, `path`. */
  source?: string;
  /** The session's input (createSession's second argument). */
  input?: unknown;
}

/**
 * A delayed (`after`) transition the session took while it was quiet (no call in flight): replay lets the session's
 * next timer fire here, on simulated time, since nothing else would make its time pass.
 */
export interface TimerInput {
  type: 'timer';
  /** The delay as the machine names it (`500`, or a named delay), for reports. */
  delay: string;
}

/** What the session received from outside, in order, and where it waited for a timer. */
export type CaseInput =
  | { type: 'event'; event: { type: string; [key: string]: unknown } }
  | { type: 'cancel'; reason?: string }
  | TimerInput;

/** A recorded call result; `pending` when the call never finished (a timer or a cancel came first). */
export type CallResult = { ok: true; output: unknown } | { ok: false; error: { code: string; message: string } } | { pending: true };

/** One tool or model call result the recording holds, fed back in order per tool (or per model kind). */
export interface RecordedCall {
  type: 'call';
  call: 'tool' | 'llm' | 'machine';
  /** Tool name, model call kind (classify, extract, generate, agent), or the id of the machine a child session ran. */
  name: string;
  /** The tool's arguments (tools only; informative, replays do not match on them). */
  input?: unknown;
  result: CallResult;
  usage?: { promptTokens: number; completionTokens: number };
}

/** One thing the session did, in the order it did it: the timeline the diff compares. */
export type CaseStep =
  | { state: string }
  | { rejected: string; code: string }
  | { tool: string; input: unknown }
  | { model: string; output?: unknown }
  | { reply: string };

/** What the session is expected to do. */
export interface CaseExpectation {
  type: 'expect';
  status: string;
  steps: CaseStep[];
  /** A subset of the final context: only these keys are compared (delete keys to compare fewer). */
  context: Record<string, unknown>;
}

/** A parsed case file. */
export interface CaseFile {
  header: CaseHeader;
  inputs: CaseInput[];
  calls: RecordedCall[];
  expect: CaseExpectation;
  /** The file it was read from, when it was. */
  path?: string;
}

/** The case as JSON lines: header, inputs, calls, expectation (one record a line, ending with a newline). */
export function serializeCase(file: CaseFile): string {
  const lines: unknown[] = [file.header, ...file.inputs, ...file.calls, file.expect];
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

/** Parses case file text; `where` names it in errors. Throws a TestingError with a CASE_* code. */
export function parseCase(text: string, where = 'case'): CaseFile {
  const inputs: CaseInput[] = [];
  const calls: RecordedCall[] = [];
  let header: CaseHeader | undefined;
  let expect: CaseExpectation | undefined;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const at = `${where}:${i + 1}`;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw new TestingError('CASE_BAD_LINE', `${at}: not valid JSON (${(error as Error).message})`);
    }
    if (!record || typeof record !== 'object' || Array.isArray(record))
      throw new TestingError('CASE_BAD_LINE', `${at}: a line must be a JSON object`);
    if (!header) {
      if (record.type !== 'case')
        throw new TestingError(
          'CASE_NO_HEADER',
          `${at}: the first line must be the case header ({"type":"case","formatVersion":${CASE_FORMAT_VERSION},"machineId":...})`,
        );
      if (record.formatVersion !== CASE_FORMAT_VERSION) {
        throw new TestingError(
          'CASE_FORMAT_VERSION',
          `${at}: case format version ${JSON.stringify(record.formatVersion)} is not readable by this Flowing (it reads version ${CASE_FORMAT_VERSION}); record the case again`,
        );
      }
      if (typeof record.machineId !== 'string' || typeof record.specHash !== 'string' || typeof record.name !== 'string') {
        throw new TestingError('CASE_BAD_LINE', `${at}: the header needs string machineId, specHash and name`);
      }
      header = record as unknown as CaseHeader;
      continue;
    }
    switch (record.type) {
      case 'event':
        if (!isObject(record.event) || typeof record.event.type !== 'string')
          throw new TestingError('CASE_BAD_LINE', `${at}: an event line needs "event": { "type": ... }`);
        inputs.push(record as unknown as CaseInput);
        break;
      case 'cancel':
        inputs.push(record as unknown as CaseInput);
        break;
      case 'timer':
        if (typeof record.delay !== 'string') throw new TestingError('CASE_BAD_LINE', `${at}: a timer line needs "delay" (e.g. "500")`);
        inputs.push(record as unknown as CaseInput);
        break;
      case 'call':
        if (
          (record.call !== 'tool' && record.call !== 'llm' && record.call !== 'machine') ||
          typeof record.name !== 'string' ||
          !isCallResult(record.result)
        ) {
          throw new TestingError(
            'CASE_BAD_LINE',
            `${at}: a call line needs "call": "tool"|"llm"|"machine", a "name" and a "result" ({ok,output}, {ok:false,error} or {pending:true})`,
          );
        }
        calls.push(record as unknown as RecordedCall);
        break;
      case 'expect':
        if (typeof record.status !== 'string' || !Array.isArray(record.steps) || !isObject(record.context)) {
          throw new TestingError('CASE_BAD_LINE', `${at}: the expect line needs "status", "steps" and "context"`);
        }
        expect = record as unknown as CaseExpectation;
        break;
      default:
        throw new TestingError(
          'CASE_BAD_LINE',
          `${at}: unknown record type ${JSON.stringify(record.type)} (expected event, cancel, timer, call or expect)`,
        );
    }
  }
  if (!header) throw new TestingError('CASE_NO_HEADER', `${where} is empty; a case file starts with a case header line`);
  if (!expect) throw new TestingError('CASE_NO_EXPECTATION', `${where} has no expect line`);
  return { header, inputs, calls, expect };
}

/** Reads and parses a case file. */
export async function readCaseFile(path: string): Promise<CaseFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TestingError('CASE_UNREADABLE', `cannot read case file ${path}: ${(error as Error).message}`);
  }
  return { ...parseCase(text, path), path };
}

/** Refuses a case recorded on another machine (CASE_WRONG_MACHINE). */
export function checkCaseMachine(file: CaseFile, machineId: string): void {
  if (file.header.machineId !== machineId) {
    throw new TestingError(
      'CASE_WRONG_MACHINE',
      `${file.path ?? `case '${file.header.name}'`} was recorded on machine '${file.header.machineId}', not '${machineId}'; move it to machines/${file.header.machineId}/cases/`,
    );
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isCallResult(value: unknown): value is CallResult {
  if (!isObject(value)) return false;
  if (value.pending === true) return true;
  if (value.ok === true) return 'output' in value;
  return value.ok === false && isObject(value.error) && typeof value.error.code === 'string';
}
