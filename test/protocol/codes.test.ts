import { describe, expect, it } from 'vitest';
import {
  FlowingError,
  INSPECT_ERROR_CODES,
  isFlowError,
  RUNTIME_CODE_STATUS,
  RUNTIME_ERROR_CODES,
  SERVER_ERROR_CODES,
  statusOf,
  STORE_ERROR_CODES,
  STUDIO_ERROR_CODES,
  TESTING_ERROR_CODES,
} from '@flowing/protocol';

const declared = (code: string) =>
  [RUNTIME_ERROR_CODES, STORE_ERROR_CODES, INSPECT_ERROR_CODES, TESTING_ERROR_CODES].some((table) => Object.hasOwn(table, code));

describe('the code tables', () => {
  it('give an HTTP status only to codes a table declares', () => {
    const undeclared = Object.keys(RUNTIME_CODE_STATUS).filter((code) => !declared(code));
    expect(undeclared).toEqual([]);
  });

  it("answer each server code with its own status, a mapped code with the table's, and any other code with 409", () => {
    for (const [code, { status }] of Object.entries(SERVER_ERROR_CODES)) expect(statusOf(code)).toBe(status);
    expect(statusOf('SESSION_NOT_FOUND')).toBe(404);
    expect(statusOf('INVALID_PAYLOAD')).toBe(422);
    expect(statusOf('STORE_UNAVAILABLE')).toBe(503);
    expect(statusOf('ORDER_NOT_FOUND')).toBe(409);
  });

  it('name no code twice with two meanings across the server and studio tables', () => {
    const shared = Object.keys(SERVER_ERROR_CODES).filter((code) => Object.hasOwn(STUDIO_ERROR_CODES, code) || declared(code));
    expect(shared).toEqual([]);
  });
});

describe('FlowingError', () => {
  it('is the FlowError shape as JSON: code, message, and details only when there are some', () => {
    const plain = new FlowingError('SESSION_NOT_FOUND', 'no session s-1');
    expect(JSON.parse(JSON.stringify(plain))).toEqual({ code: 'SESSION_NOT_FOUND', message: 'no session s-1' });
    const detailed = new FlowingError('INSPECT_SEQ_OUT_OF_RANGE', 'no event 9', { details: { seq: 9, lastSeq: 4 } });
    expect(JSON.parse(JSON.stringify(detailed))).toEqual({
      code: 'INSPECT_SEQ_OUT_OF_RANGE',
      message: 'no event 9',
      details: { seq: 9, lastSeq: 4 },
    });
    expect(isFlowError(detailed.toJSON())).toBe(true);
  });

  it('reads as a FlowError only with an UPPER_SNAKE code and a string message', () => {
    expect(isFlowError({ code: 'SESSION_NOT_FOUND', message: 'x', details: {} })).toBe(true);
    expect(isFlowError({ applied: false, code: 'NO_TRANSITION', message: 'x' })).toBe(true);
    expect(isFlowError({ code: 'not a code', message: 'x' })).toBe(false);
    expect(isFlowError({ code: 'SESSION_NOT_FOUND' })).toBe(false);
    expect(isFlowError('SESSION_NOT_FOUND')).toBe(false);
  });
});
