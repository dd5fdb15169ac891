import type { SessionFile, SessionFileHeader } from '@flowing/protocol';
import { useEditor } from '../../store/editor-store.ts';
import { refreshMachines } from '../inspect-actions.ts';
import { useInspect } from '../inspect-store.ts';
import { HistoryError, historyError } from './errors.ts';
import { useHistory, type SpecNotice } from './history-store.ts';
import { markFileStart } from './perf.ts';
import { graphSpecFor, type GraphSpec } from './graph-spec.ts';
import { readSessionFile, readSessionStream } from './read-file.ts';

/** Where a same-origin session file may be fetched from (`flowing inspect FILE` serves it there). */
export const INSPECT_FILE_PATH = '/api/inspect-file/';

function noticeOf(error: unknown): { code: string; message: string } {
  if (error instanceof HistoryError) return { code: error.code, message: error.message };
  return { code: 'INSPECT_FILE_NOT_JSON', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Compares the file's spec hash with the spec the Inspect view draws for its machine (opening that machine in the
 * editor first when another one is open and the project has it). Returns the notice to show, or null when the graph
 * matches the log.
 */
export async function specNoticeFor(header: SessionFileHeader): Promise<{ notice: SpecNotice | null; drawn: GraphSpec | undefined }> {
  const editor = useEditor.getState();
  if (editor.machineId !== header.machineId && editor.machines.some((m) => m.id === header.machineId) && !editor.dirty) {
    await editor.openMachine(header.machineId);
  }
  // The served machines are listed by the sessions poll; a file opened before its first answer waits for one.
  if (useInspect.getState().runtimeMachines === null) await refreshMachines();
  const drawn = await graphSpecFor(header.machineId);
  if (!drawn) {
    const open = useEditor.getState().machineId;
    return {
      drawn,
      notice: {
        code: 'INSPECT_MACHINE_MISSING',
        fileSpecHash: header.specHash,
        currentSpecHash: null,
        message: `The file is a session of machine '${header.machineId}', which is not open${open ? ` (open: '${open}')` : ''}; the events and the scrubber work, the graph is not shown.`,
      },
    };
  }
  if (drawn.specHash === header.specHash) return { notice: null, drawn };
  return {
    drawn,
    notice: {
      code: 'INSPECT_SPEC_CHANGED',
      fileSpecHash: header.specHash,
      currentSpecHash: drawn.specHash,
      message: `The session was recorded from another version of '${header.machineId}' (spec ${header.specHash.slice(0, 12)}, ${drawn.from === 'runtime' ? 'served' : 'open'} now ${drawn.specHash.slice(0, 12)}); the graph is not drawn, so it cannot show a wrong picture. The events and the scrubber still work.`,
    },
  };
}

/**
 * Opens a session export in the inspector, offline: the log replaces the selected session's, the cursor goes to the
 * last event, and the graph is highlighted only when the file's spec hash is that of the open machine. A file that
 * cannot be read leaves whatever was shown in place and sets a coded error instead.
 * @returns whether the file was opened
 */
export async function openSessionText(text: string, name: string): Promise<boolean> {
  return openParsed(async () => readSessionFile(text), name);
}

async function openParsed(read: () => Promise<SessionFile>, name: string): Promise<boolean> {
  const history = useHistory.getState();
  let file: SessionFile;
  try {
    file = await read();
  } catch (error) {
    history.setError(noticeOf(error));
    return false;
  }
  history.setError(null);
  history.setFileGraph(null, null);
  const inspect = useInspect.getState();
  inspect.selectSession(null);
  inspect.setEvents(file.events);
  inspect.setCursor(file.events.length - 1);
  history.setFile({ name, header: file.header, journalCount: file.journal.length });
  try {
    const { notice, drawn } = await specNoticeFor(file.header);
    useHistory.getState().setFileGraph(notice ? null : (drawn ?? null), notice);
  } catch (error) {
    useHistory.getState().setFileGraph(null, {
      code: 'INSPECT_MACHINE_MISSING',
      fileSpecHash: file.header.specHash,
      currentSpecHash: null,
      message: `the machine could not be compared with the file: ${(error as Error).message}`,
    });
  }
  return true;
}

/** Opens a file the user picked or dropped, reading it as it streams in (the text is never held whole). */
export async function openSessionFile(file: File): Promise<boolean> {
  markFileStart();
  return openParsed(async () => {
    try {
      return await readSessionStream(file.stream());
    } catch (error) {
      if (error instanceof HistoryError) throw error;
      throw historyError('INSPECT_FILE_EMPTY', `${file.name} could not be read (${(error as Error).message})`);
    }
  }, file.name);
}

/**
 * Opens the file `flowing inspect FILE` serves (the `?inspect=` query of the page). Only a path of this studio's
 * own file route is fetched; anything else is refused with INSPECT_FILE_FETCH_FAILED.
 */
export async function openSessionUrl(path: string): Promise<boolean> {
  markFileStart();
  const history = useHistory.getState();
  if (!path.startsWith(INSPECT_FILE_PATH) || !/^[A-Za-z0-9/_.-]+$/.test(path)) {
    history.setError(
      noticeOf(historyError('INSPECT_FILE_FETCH_FAILED', `${JSON.stringify(path.slice(0, 80))} is not a file this studio serves`)),
    );
    return false;
  }
  let response: Response;
  try {
    response = await fetch(path, { headers: { accept: 'application/x-ndjson' } });
  } catch (error) {
    history.setError(noticeOf(historyError('INSPECT_FILE_FETCH_FAILED', `the studio server did not answer (${(error as Error).message})`)));
    return false;
  }
  if (!response.ok) {
    history.setError(noticeOf(historyError('INSPECT_FILE_FETCH_FAILED', `the studio server answered ${response.status}`)));
    return false;
  }
  const name = response.headers.get('x-flowing-file-name') ?? path.slice(INSPECT_FILE_PATH.length);
  return openParsed(() => (response.body ? readSessionStream(response.body) : Promise.resolve(readSessionFile(''))), name);
}
