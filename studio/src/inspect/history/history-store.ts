import type { SessionFileHeader } from '@flowing/protocol';
import { create } from 'zustand';
import type { GraphSpec } from './graph-spec.ts';

/** A session opened from a file: what the views show instead of a runtime's session. */
export interface OpenedFile {
  name: string;
  header: SessionFileHeader;
  /** Journal entries in the file (shown with the calls; never re-run). */
  journalCount: number;
}

/**
 * Why the graph cannot show the opened log: the file was recorded from another version of the machine than the one
 * open (spec hashes differ), or from a machine this project does not have. The views keep the list and the scrubber
 * and show this notice instead of the highlight.
 */
export interface SpecNotice {
  code: 'INSPECT_SPEC_CHANGED' | 'INSPECT_MACHINE_MISSING';
  message: string;
  fileSpecHash: string;
  currentSpecHash: string | null;
}

/** A coded failure shown in the history panel (a file that cannot be read, a refused fork or export). */
export interface HistoryNotice {
  code: string;
  message: string;
}

export interface HistoryState {
  /** The session file open in the inspector; null when the log comes from a runtime. */
  file: OpenedFile | null;
  specNotice: SpecNotice | null;
  /** The spec the opened file is drawn on: set only when its hash is the file's (never a wrong picture). */
  fileGraph: GraphSpec | null;
  error: HistoryNotice | null;
  /** The timeline bar selected (its details show), by `<kind>:<id>`. */
  selectedBar: string | null;
  /** The event index the fork dialog forks at; null when it is closed. */
  forkAt: number | null;
  /** The timeline's x axis: the event order (lined up with the scrubber) or wall-clock time. */
  timeAxis: 'events' | 'time';
}

export interface HistoryActions {
  setFile(file: OpenedFile | null): void;
  /** Sets what the file is drawn on, or the notice saying why it is not. */
  setFileGraph(graph: GraphSpec | null, notice: SpecNotice | null): void;
  setError(error: HistoryNotice | null): void;
  selectBar(key: string | null): void;
  openFork(index: number | null): void;
  setTimeAxis(axis: HistoryState['timeAxis']): void;
}

/** State of the step-through panel that is not the log or the cursor (those live in the Inspect store). */
export const useHistory = create<HistoryState & HistoryActions>()((set) => ({
  file: null,
  specNotice: null,
  fileGraph: null,
  error: null,
  selectedBar: null,
  forkAt: null,
  timeAxis: 'events',
  setFile: (file) => set({ file, selectedBar: null, forkAt: null, ...(file ? {} : { specNotice: null, fileGraph: null }) }),
  setFileGraph: (fileGraph, specNotice) => set({ fileGraph, specNotice }),
  setError: (error) => set({ error }),
  selectBar: (selectedBar) => set({ selectedBar }),
  openFork: (forkAt) => set({ forkAt }),
  setTimeAxis: (timeAxis) => set({ timeAxis }),
}));
