import { useEffect, useRef, useState } from 'react';
import { describeError } from '../../api-error.ts';
import { useInspect } from '../inspect-store.ts';
import { exportSession } from './history-client.ts';
import { useHistory } from './history-store.ts';
import { openSessionFile } from './open-file.ts';
import { SaveCase } from './SaveCase.tsx';

/** Saves text as a download in the browser (a Blob URL clicked through a temporary link). */
function download(text: string, fileName: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Session files dropped anywhere on the page open while the Inspect view is shown. */
function useFileDrop(): boolean {
  const [over, setOver] = useState(false);
  useEffect(() => {
    const hasFiles = (e: DragEvent) => [...(e.dataTransfer?.types ?? [])].includes('Files');
    const onOver = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
      setOver(true);
    };
    const onLeave = (e: DragEvent) => {
      if (e.relatedTarget === null) setOver(false);
    };
    const onDrop = (e: DragEvent) => {
      const file = e.dataTransfer?.files[0];
      setOver(false);
      if (!file) return;
      e.preventDefault();
      void openSessionFile(file);
    };
    window.addEventListener('dragover', onOver);
    window.addEventListener('dragleave', onLeave);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragover', onOver);
      window.removeEventListener('dragleave', onLeave);
      window.removeEventListener('drop', onDrop);
    };
  }, []);
  return over;
}

/**
 * Export the selected session (the runtime's JSON-lines file, downloaded), open one by file picker or drop, and,
 * while a file is open, what it is and a way back to the runtime's sessions.
 */
export function FileControls() {
  const sessionId = useInspect((s) => s.selectedSessionId);
  const file = useHistory((s) => s.file);
  const input = useRef<HTMLInputElement>(null);
  const [exporting, setExporting] = useState(false);
  const over = useFileDrop();

  const exportSelected = async () => {
    if (!sessionId) return;
    setExporting(true);
    try {
      const { text, fileName } = await exportSession(useInspect.getState().source, sessionId);
      download(text, fileName);
      useHistory.getState().setError(null);
    } catch (e) {
      const coded = describeError(e, 'INSPECT_EXPORT_FAILED');
      useHistory.getState().setError({ code: coded.code, message: `export of ${sessionId} failed: ${coded.message}` });
    } finally {
      setExporting(false);
    }
  };

  const closeFile = () => {
    useHistory.getState().setFile(null);
    useInspect.getState().setEvents([]);
  };

  return (
    <div className={`history-files${over ? ' is-drop-target' : ''}`} data-testid="history-files">
      <button
        type="button"
        disabled={!sessionId || exporting}
        onClick={() => void exportSelected()}
        data-testid="export-session"
        title="Download this session as a .flowing.jsonl file"
      >
        {exporting ? 'Exporting…' : 'Export'}
      </button>
      <SaveCase />
      <button
        type="button"
        onClick={() => input.current?.click()}
        data-testid="open-session-file"
        title="Open a .flowing.jsonl file (or drop one here)"
      >
        Open file…
      </button>
      <input
        ref={input}
        type="file"
        accept=".jsonl,.ndjson,.json,application/x-ndjson"
        hidden
        data-testid="session-file-input"
        onChange={(e) => {
          const picked = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (picked) void openSessionFile(picked);
        }}
      />
      {file && (
        <span className="history-file" data-testid="opened-file" data-session={file.header.sessionId} data-machine={file.header.machineId}>
          Offline: <strong>{file.name}</strong> — session {file.header.sessionId} of {file.header.machineId}
          <button type="button" className="link" onClick={closeFile} data-testid="close-file">
            close
          </button>
        </span>
      )}
      {over && <span className="history-drop-hint">Drop a session file to open it</span>}
    </div>
  );
}
