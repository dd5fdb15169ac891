import { useEffect, useRef, useState } from 'react';
import { api, type DeletedMachine } from '../api.ts';
import { describeError } from '../api-error.ts';
import { DialogBackdrop } from './DialogBackdrop.tsx';

export interface DeleteMachineDialogProps {
  id: string;
  /** The version the spec was loaded at: the delete is refused if the file changed on disk since. */
  baseVersion: string;
  onDeleted: (result: DeletedMachine) => void;
  onCancel: () => void;
}

/** "Delete machine": says what goes (the spec and its generated files) and what stays (a hand-written impl.ts). */
export function DeleteMachineDialog({ id, baseVersion, onDeleted, onCancel }: DeleteMachineDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string } | undefined>();
  // Cancel has the focus when the dialog opens: Enter alone never deletes.
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
  }, []);
  const remove = async () => {
    setBusy(true);
    try {
      onDeleted(await api.deleteMachine(id, baseVersion));
    } catch (err) {
      setError(describeError(err, 'STUDIO_ERROR'));
      setBusy(false);
    }
  };
  return (
    <DialogBackdrop onDismiss={onCancel}>
      <div
        className="dialog"
        role="alertdialog"
        aria-modal="true"
        aria-label="Delete machine"
        data-testid="delete-machine-dialog"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          }
        }}
      >
        <h2>
          Delete machine <span className="mono">{id}</span>?
        </h2>
        <p>This removes these files (unsaved edits are lost too):</p>
        <ul className="mono">
          <li>
            machines/{id}/{id}.flow.json
          </li>
          <li>
            machines/{id}/{id}.machine.ts
          </li>
          <li>
            machines/{id}/{id}.registry.ts
          </li>
        </ul>
        <p data-testid="delete-machine-keeps">
          Hand-written code is kept:{' '}
          <span className="mono">
            machines/{id}/{id}.impl.ts
          </span>{' '}
          stays if it exists.
        </p>
        {error && (
          <p className="field-error" role="alert" data-testid="delete-machine-error" data-code={error.code}>
            {error.message} <span className="mono">({error.code})</span>
          </p>
        )}
        <div className="dialog__buttons">
          <button type="button" ref={cancel} onClick={onCancel}>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            style={{ marginTop: 0 }}
            data-testid="delete-machine-confirm"
            disabled={busy}
            onClick={() => void remove()}
          >
            {busy ? 'Deleting…' : 'Delete'}
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
