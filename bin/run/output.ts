/** Where `flowing run` writes lines; `closed` turns true once the reader went away. */
export interface LineWriter {
  write(line: string): void;
  readonly closed: boolean;
}

/**
 * Lines to a stream that may be a pipe whose reader stops early (`flowing run --json | head -1`): the EPIPE that
 * follows is the reader saying "enough", not a failure, so writing stops quietly instead of crashing with a stack.
 * Any other stream error is reported once on stderr with a code.
 */
export function streamLines(
  stream: NodeJS.WritableStream & { on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown },
): LineWriter {
  let closed = false;
  stream.on('error', (error) => {
    if (!closed && error.code !== 'EPIPE')
      process.stderr.write(`error RUN_OUTPUT_FAILED: cannot write the output (${error.code ?? error.message})\n`);
    closed = true;
  });
  return {
    write(line) {
      if (!closed) stream.write(`${line}\n`);
    },
    get closed() {
      return closed;
    },
  };
}
