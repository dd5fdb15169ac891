import { useState } from 'react';
import { useEditor } from '../store/editor-store.ts';
import { openCreatedMachine } from './machine-lifecycle.ts';
import { NewMachineDialog } from './NewMachineDialog.tsx';

/** "New machine" in the toolbar, with its dialog. */
export function NewMachineButton() {
  const machines = useEditor((s) => s.machines);
  const [open, setOpen] = useState(false);
  const start = () => {
    if (useEditor.getState().dirty && !window.confirm('Discard unsaved changes?')) return;
    setOpen(true);
  };
  return (
    <>
      <button type="button" onClick={start} data-testid="new-machine" title="Create machines/<id>/<id>.flow.json with one initial state">
        New machine
      </button>
      {open && (
        <NewMachineDialog
          existing={machines.map((m) => m.id)}
          onCancel={() => setOpen(false)}
          onCreated={(id) => {
            setOpen(false);
            void openCreatedMachine(id);
          }}
        />
      )}
    </>
  );
}
