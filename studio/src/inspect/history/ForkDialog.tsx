import type { RuntimeEvent } from '@flowing/protocol';
import { useState } from 'react';
import { describeError } from '../../api-error.ts';
import { DialogBackdrop } from '../../components/DialogBackdrop.tsx';
import { useInspect } from '../inspect-store.ts';
import type { HistoryError } from './errors.ts';
import { forkFields, pinnedPatch, type ForkField } from './fork-fields.ts';
import { forkSession } from './history-client.ts';
import { useHistory } from './history-store.ts';

/**
 * Fork from event N: the context at N with each field editable (an edited field is pinned: the new session starts
 * with that value), then `POST /sessions/:id/fork`. The new session opens selected; its log names its parent.
 */
export function ForkDialog({ sessionId, event, context }: { sessionId: string; event: RuntimeEvent; context: unknown }) {
  const [fields, setFields] = useState<ForkField[]>(() => forkFields(context));
  const [error, setError] = useState<{ code: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => useHistory.getState().openFork(null);
  const edit = (name: string, change: Partial<ForkField>) =>
    setFields((all) => all.map((f) => (f.name === name ? { ...f, ...change } : f)));

  const submit = async () => {
    let patch: Record<string, unknown> | undefined;
    try {
      patch = pinnedPatch(fields);
    } catch (e) {
      setError({ code: (e as HistoryError).code, message: (e as HistoryError).message });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const forked = await forkSession(useInspect.getState().source, sessionId, { atSeq: event.seq, ...(patch ? { context: patch } : {}) });
      close();
      useInspect.getState().selectSession(forked.sessionId);
    } catch (e) {
      setError(describeError(e, 'INSPECT_FORK_FAILED'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <DialogBackdrop onDismiss={close}>
      <div className="dialog history-fork" role="dialog" aria-modal="true" aria-label="Fork session" data-testid="fork-dialog">
        <h2>Fork at seq {event.seq}</h2>
        <p className="muted">
          A new session starts at the state and context of session {sessionId} right after seq {event.seq} ({event.type}). Nothing of the
          parent is run again. Edit a value to pin it.
        </p>
        {fields.length === 0 && <p className="muted">The context has no fields.</p>}
        <div className="history-fork__fields">
          {fields.map((field) => (
            <label key={field.name} className={field.pinned ? 'is-pinned' : ''}>
              <input
                type="checkbox"
                checked={field.pinned}
                onChange={(e) => edit(field.name, { pinned: e.currentTarget.checked })}
                aria-label={`Pin ${field.name}`}
                data-testid={`fork-pin-${field.name}`}
              />
              <span className="history-fork__name">{field.name}</span>
              <input
                type="text"
                value={field.text}
                onChange={(e) => edit(field.name, { text: e.currentTarget.value, pinned: true })}
                aria-label={`Context ${field.name}`}
                data-testid={`fork-field-${field.name}`}
                placeholder={typeof field.original === 'string' ? 'text' : 'JSON'}
              />
            </label>
          ))}
        </div>
        {error && (
          <p className="field-error" role="alert" data-testid="fork-error" data-code={error.code}>
            {error.message} ({error.code})
          </p>
        )}
        <div className="dialog__buttons">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="button" className="primary" disabled={busy} onClick={() => void submit()} data-testid="fork-submit">
            {busy ? 'Forking…' : 'Fork'}
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
