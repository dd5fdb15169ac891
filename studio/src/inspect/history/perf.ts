/** Performance API names of the inspector's figures (the e2e test reads them with `performance.getEntriesByName`). */
export const PERF = {
  /** From choosing a file (or its URL) to the first frame that shows its log. */
  fileRender: 'flowing:inspect:file-render',
  fileStart: 'flowing:inspect:file-start',
  /** From a step (key, button, scrubber, jump, timeline) to the next frame after every view re-rendered at the cursor. */
  step: 'flowing:inspect:step',
  stepStart: 'flowing:inspect:step-start',
} as const;

let stepPending = false;

/** Marks the start of a cursor move; the HistoryPanel measures it after the frame that shows it. */
export function markStepStart(): void {
  performance.mark(PERF.stepStart);
  stepPending = true;
}

/** Measures the pending step (if any) once the browser has drawn the next frame. */
export function measureStepAfterPaint(): void {
  if (!stepPending) return;
  stepPending = false;
  requestAnimationFrame(() => {
    // The rAF callback runs before that frame's paint; a zero timeout after it lands once the frame is drawn.
    setTimeout(() => performance.measure(PERF.step, PERF.stepStart), 0);
  });
}

/** Marks the start of opening a session file. */
export function markFileStart(): void {
  performance.clearMarks(PERF.fileStart);
  performance.mark(PERF.fileStart);
}

/** Measures the file's time to first render once the frame that shows it is drawn. */
export function measureFileAfterPaint(): void {
  requestAnimationFrame(() => {
    setTimeout(() => performance.measure(PERF.fileRender, PERF.fileStart), 0);
  });
}
