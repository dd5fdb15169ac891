import { useEffect, useRef, useState } from 'react';
import type { TransitionPlace } from '../graph/index.ts';
import { DialogBackdrop } from './DialogBackdrop.tsx';

/** The kinds a new transition from a state can be, with the words the dialog shows for them. */
const KINDS: Array<{ kind: TransitionPlace['kind']; label: string; hint: string }> = [
  { kind: 'on', label: 'on event', hint: 'taken when the event arrives' },
  { kind: 'after', label: 'after a delay', hint: 'taken when the state has been active this long (a timeout)' },
  { kind: 'always', label: 'always', hint: 'taken at once when its guard holds (eventless)' },
  { kind: 'done', label: 'when done', hint: 'taken when the compound state reaches a final child (all regions of a parallel one)' },
  { kind: 'onDone', label: 'invoke done', hint: 'a branch taken when the call succeeds' },
  { kind: 'onError', label: 'invoke error', hint: 'a branch taken when the call fails' },
];

export interface ConnectDialogProps {
  sourceName: string;
  targetName: string;
  /** The kinds that make sense for the source state (`done` only for compound/parallel, invoke outcomes only with an invoke). */
  kinds: ReadonlyArray<TransitionPlace['kind']>;
  onSubmit: (place: TransitionPlace) => void;
  onCancel: () => void;
}

/** Asks which kind of transition a drag from a state should create, and its event name or delay. */
export function ConnectDialog({ sourceName, targetName, kinds, onSubmit, onCancel }: ConnectDialogProps) {
  const [kind, setKind] = useState<TransitionPlace['kind']>('on');
  const [value, setValue] = useState('');
  const input = useRef<HTMLInputElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: focus returns to the value field each time the kind changes (choosing a kind moves it to the radio)
  useEffect(() => {
    input.current?.focus();
  }, [kind]);
  const v = value.trim();
  const error =
    kind === 'on'
      ? v === '' || /^[A-Z][A-Z0-9_]*$/.test(v)
        ? undefined
        : 'Use capitals, digits and _, starting with a letter (e.g. USER_MESSAGE)'
      : kind === 'after'
        ? v === '' || /^[1-9][0-9]*$/.test(v)
          ? undefined
          : 'A whole number of milliseconds, e.g. 5000'
        : undefined;
  const needsValue = kind === 'on' || kind === 'after';
  const ready = !error && (!needsValue || v !== '');
  const submit = () => {
    if (!ready) return;
    if (kind === 'on') onSubmit({ kind, event: v });
    else if (kind === 'after') onSubmit({ kind, delay: v });
    else onSubmit({ kind } as TransitionPlace);
  };
  return (
    <DialogBackdrop onDismiss={onCancel}>
      <div
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-label="New transition"
        data-testid="connect-dialog"
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            submit();
          }
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          }
        }}
      >
        <h2>
          New transition{' '}
          <span className="mono">
            {sourceName} → {targetName}
          </span>
        </h2>
        <div className="kind-choice" role="radiogroup" aria-label="kind of transition">
          {KINDS.filter((k) => kinds.includes(k.kind)).map((k) => (
            <label key={k.kind} className="kind-choice__item" title={k.hint}>
              <input
                type="radio"
                name="kind"
                value={k.kind}
                checked={kind === k.kind}
                data-testid={`connect-kind-${k.kind}`}
                onChange={() => setKind(k.kind)}
              />
              {k.label}
            </label>
          ))}
        </div>
        {needsValue && (
          <label>
            {kind === 'on' ? 'Event name (e.g. USER_MESSAGE)' : 'Delay in milliseconds'}
            <input ref={input} value={value} data-testid="connect-value" className="mono" onChange={(e) => setValue(e.target.value)} />
          </label>
        )}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog__buttons">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="primary" data-testid="connect-ok" disabled={!ready} onClick={submit}>
            Add
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
