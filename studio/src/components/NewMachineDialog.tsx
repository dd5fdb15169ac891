import { useEffect, useRef, useState } from 'react';
import { api } from '../api.ts';
import { describeError } from '../api-error.ts';
import { machineIdProblem, type MachineIdProblem } from './machine-id.ts';
import { DialogBackdrop } from './DialogBackdrop.tsx';

export interface NewMachineDialogProps {
  /** Ids of the machines that exist (a new one must differ). */
  existing: readonly string[];
  onCreated: (id: string) => void;
  onCancel: () => void;
}

/** "New machine": asks for the id, checks it as the CLI does (errors inline, with their code), creates the spec. */
export function NewMachineDialog({ existing, onCreated, onCancel }: NewMachineDialogProps) {
  const [id, setId] = useState('');
  const [serverProblem, setServerProblem] = useState<MachineIdProblem | undefined>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
  }, []);
  const problem = serverProblem ?? (id === '' ? undefined : machineIdProblem(id, existing));
  const canCreate = id !== '' && problem === undefined && !busy;

  const create = async () => {
    if (!canCreate) return;
    setBusy(true);
    try {
      await api.createMachine(id);
      onCreated(id);
    } catch (err) {
      // The server has the last word (an id taken meanwhile, a folder that is a symlink): show its code (the spec's, for an id).
      setServerProblem(describeError(err, 'STUDIO_ERROR'));
      setBusy(false);
    }
  };

  return (
    <DialogBackdrop onDismiss={onCancel}>
      <div className="dialog" role="dialog" aria-modal="true" aria-label="New machine" data-testid="new-machine-dialog">
        <h2>New machine</h2>
        <label>
          Machine id
          <input
            ref={input}
            className="mono"
            value={id}
            placeholder="e.g. order-support"
            data-testid="new-machine-id"
            aria-invalid={problem !== undefined}
            onChange={(e) => {
              setId(e.target.value);
              setServerProblem(undefined);
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                void create();
              }
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                onCancel();
              }
            }}
          />
        </label>
        <p style={{ fontSize: 12, color: 'var(--muted)' }}>
          Saved as{' '}
          <span className="mono">
            machines/{id || '<id>'}/{id || '<id>'}.flow.json
          </span>
          , with one initial state.
        </p>
        {problem && (
          <p className="field-error" role="alert" data-testid="new-machine-error" data-code={problem.code}>
            {problem.message} <span className="mono">({problem.code})</span>
          </p>
        )}
        <div className="dialog__buttons">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="primary" data-testid="new-machine-create" disabled={!canCreate} onClick={() => void create()}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
