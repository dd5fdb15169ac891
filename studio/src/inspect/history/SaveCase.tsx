import { useEffect, useState } from 'react';
import { api } from '../../api.ts';
import { describeError, hasCode } from '../../api-error.ts';
import { useInspect } from '../inspect-store.ts';
import { fetchSessionCase } from './history-client.ts';

/** What the form shows after a try: the saved file, a name that exists (asking to replace it), or a coded error. */
type Outcome =
  | { kind: 'saved'; file: string; machineId: string; replaced: boolean }
  | { kind: 'exists'; file: string; machineId: string; name: string; text: string }
  | { kind: 'error'; code: string; message: string };

/** The name the runtime gives a case of this session when none is chosen. */
export function defaultCaseName(sessionId: string): string {
  return `session-${sessionId.slice(0, 8).toLowerCase()}`;
}

/** `reply, intent ,` → `['reply', 'intent']`. */
function contextKeys(text: string): string[] {
  return text
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}

/** A refused case shows the parser's CASE_* code (`details.problem`), as `flowing test` would. */
const coded = (error: unknown) => describeError(error, 'INSPECT_SAVE_CASE_FAILED');

/** The machine a case header names (the fallback when the sessions list does not hold the session). */
function headerMachine(text: string): string | undefined {
  try {
    const end = text.indexOf('\n');
    const header = JSON.parse(end < 0 ? text : text.slice(0, end)) as { machineId?: unknown };
    return typeof header.machineId === 'string' ? header.machineId : undefined;
  } catch {
    return undefined;
  }
}

function SaveCaseForm({ sessionId, onClose }: { sessionId: string; onClose: () => void }) {
  const sessionMachine = useInspect((s) => s.sessions.find((x) => x.sessionId === sessionId)?.machineId);
  const [name, setName] = useState(() => defaultCaseName(sessionId));
  const [context, setContext] = useState('');
  const [existing, setExisting] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  useEffect(() => {
    if (!sessionMachine) return;
    let live = true;
    // Only a hint: the save itself is refused with STUDIO_CASE_EXISTS when the name is taken.
    api.listCases(sessionMachine).then(
      (names) => {
        if (live) setExisting(names);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [sessionMachine]);

  const write = async (machineId: string, caseName: string, text: string, replace: boolean) => {
    try {
      const saved = await api.saveCase(machineId, caseName, text, replace);
      setOutcome({ kind: 'saved', file: saved.file, machineId, replaced: saved.replaced });
      setExisting((names) => (names.includes(caseName) ? names : [...names, caseName].sort()));
    } catch (e) {
      if (hasCode(e, 'STUDIO_CASE_EXISTS') && !replace) {
        setOutcome({
          kind: 'exists',
          file: String(e.details.file ?? `machines/${machineId}/cases/${caseName}.case.jsonl`),
          machineId,
          name: caseName,
          text,
        });
      } else {
        setOutcome({ kind: 'error', ...coded(e) });
      }
    }
  };

  const save = async () => {
    setBusy(true);
    setOutcome(null);
    try {
      const caseName = name.trim();
      const text = await fetchSessionCase(useInspect.getState().source, sessionId, { name: caseName, context: contextKeys(context) });
      const machineId = sessionMachine ?? headerMachine(text);
      if (!machineId) throw new Error(`the case of session ${sessionId} names no machine`);
      await write(machineId, caseName, text, false);
    } catch (e) {
      setOutcome({ kind: 'error', ...coded(e) });
    } finally {
      setBusy(false);
    }
  };

  const replace = async (pending: Extract<Outcome, { kind: 'exists' }>) => {
    setBusy(true);
    try {
      await write(pending.machineId, pending.name, pending.text, true);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="history-save-case"
      data-testid="save-case-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!busy) void save();
      }}
    >
      <label>
        Case name{' '}
        <input
          type="text"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          data-testid="save-case-name"
          spellCheck={false}
          size={22}
        />
      </label>
      <label title="Final context keys the case compares, comma-separated; empty compares them all">
        Expect context{' '}
        <input
          type="text"
          value={context}
          onChange={(e) => setContext(e.currentTarget.value)}
          data-testid="save-case-context"
          placeholder="all keys (or: reply, intent)"
          spellCheck={false}
          size={22}
        />
      </label>
      <button type="submit" className="primary" disabled={busy || name.trim() === ''} data-testid="save-case-submit">
        {busy ? 'Saving…' : 'Save'}
      </button>
      <button type="button" onClick={onClose} data-testid="save-case-cancel">
        Close
      </button>
      {existing.includes(name.trim()) && outcome?.kind !== 'exists' && outcome?.kind !== 'saved' && (
        <span className="muted history-save-case__row" data-testid="save-case-taken">
          a case named {name.trim()} exists; saving asks before replacing it
        </span>
      )}
      {outcome?.kind === 'exists' && (
        <span
          className="history-notice history-save-case__row"
          role="alert"
          data-testid="save-case-replace-prompt"
          data-file={outcome.file}
        >
          {outcome.file} exists. Replace?{' '}
          <button type="button" disabled={busy} onClick={() => void replace(outcome)} data-testid="save-case-replace">
            Replace
          </button>{' '}
          <button type="button" disabled={busy} onClick={() => setOutcome(null)} data-testid="save-case-keep">
            Keep it
          </button>
        </span>
      )}
      {outcome?.kind === 'saved' && (
        <span
          className="history-notice history-save-case__row"
          role="status"
          data-testid="save-case-message"
          data-kind="saved"
          data-file={outcome.file}
          data-replaced={String(outcome.replaced)}
        >
          {outcome.replaced ? 'Replaced' : 'Saved'} {outcome.file} — run <code>flowing test {outcome.machineId}</code>
        </span>
      )}
      {outcome?.kind === 'error' && (
        <span
          className="history-error history-save-case__row"
          role="alert"
          data-testid="save-case-message"
          data-kind="error"
          data-code={outcome.code}
        >
          {outcome.message} ({outcome.code})
        </span>
      )}
    </form>
  );
}

/**
 * "Save as case…" for the selected runtime session: asks for a case name and the context keys to expect, fetches the
 * session as a case file from the runtime (`GET /sessions/:id/case`, the studio's mount or a remote `flowing serve`)
 * and writes it into the project as `machines/<machine>/cases/<name>.case.jsonl` for `flowing test`. A taken name asks
 * "Replace?" first.
 */
export function SaveCase() {
  const sessionId = useInspect((s) => s.selectedSessionId);
  const [open, setOpen] = useState(false);
  // Choosing another session closes the form, in the same render (an effect would first mount it for the new session).
  const [shownFor, setShownFor] = useState(sessionId);
  if (shownFor !== sessionId) {
    setShownFor(sessionId);
    setOpen(false);
  }
  if (!sessionId) return null;
  return (
    <span style={{ position: 'relative', whiteSpace: 'nowrap' }}>
      <button
        type="button"
        disabled={open}
        onClick={() => setOpen(true)}
        data-testid="save-case"
        title="Save this session as a regression case (machines/<machine>/cases/<name>.case.jsonl) for flowing test"
      >
        Save as case…
      </button>
      {open && <SaveCaseForm key={sessionId} sessionId={sessionId} onClose={() => setOpen(false)} />}
    </span>
  );
}
