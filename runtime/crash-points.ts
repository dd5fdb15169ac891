/**
 * Named crash points for crash tests (RELIABILITY "crash points"): with `FLOWING_FAULT=<label>:<nth>` in the
 * environment, the process SIGKILLs itself the nth time it reaches that point (default the first). Without the
 * variable a crash point costs one comparison.
 */
export const CRASH_POINTS = [
  'before-append',
  'after-append-before-call',
  'after-effect-before-complete',
  'after-complete-before-transition',
  'after-approval-persist',
  // machine calls: the parent's start of the call is stored, the child not yet created; the child ended, the parent
  // has not yet recorded it
  'machine-before-child',
  'machine-child-ended',
  // channels: the step that sent a message is stored, the message not yet handed to its receiver
  'channel-sent-before-delivery',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

function parse(text: string | undefined): { label: CrashPoint; nth: number } | undefined {
  if (!text) return undefined;
  const [label, nth = '1'] = text.split(':');
  if (!(CRASH_POINTS as readonly string[]).includes(label!) || !/^[1-9]\d*$/.test(nth)) {
    process.emitWarning(
      `FLOWING_FAULT='${text}' is not <label>:<nth> with a label of ${CRASH_POINTS.join(', ')}; no crash point is armed`,
      { code: 'FLOWING_FAULT_INVALID' },
    );
    return undefined;
  }
  return { label: label as CrashPoint, nth: Number(nth) };
}

/** A crash point: does nothing unless FLOWING_FAULT armed it. */
export type CrashPoints = (label: CrashPoint) => void;

const NO_CRASH_POINTS: CrashPoints = () => {};

/**
 * The crash points of one runtime, read from FLOWING_FAULT when the runtime is made: the returned function SIGKILLs
 * the process the nth time it is called with the armed label. Without the variable it does nothing.
 */
export function crashPointsFrom(fault: string | undefined): CrashPoints {
  const armed = parse(fault);
  if (armed === undefined) return NO_CRASH_POINTS;
  let hits = 0;
  return (label) => {
    if (armed.label !== label || ++hits !== armed.nth) return;
    process.kill(process.pid, 'SIGKILL');
    // The signal is on its way: nothing after the point may run, not even a microtask.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  };
}
