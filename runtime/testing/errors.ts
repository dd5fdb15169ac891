import type { TestingErrorCode } from '@flowing/protocol';
import { FlowingError } from '../errors.ts';

// The table is part of the wire protocol (the studio server answers case codes as `details.problem`).
export { TESTING_ERROR_CODES, type TestingErrorCode } from '@flowing/protocol';

/** An error of the testing helpers; `code` is one of TESTING_ERROR_CODES. */
export class TestingError extends FlowingError<TestingErrorCode> {
  constructor(code: TestingErrorCode, message: string, details?: unknown) {
    super(code, message, { details });
    this.name = 'TestingError';
  }
}
