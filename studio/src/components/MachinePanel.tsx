import { useState } from 'react';
import type { FieldType } from '@flowing/spec';
import { setAt } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { DeleteMachineDialog } from './DeleteMachineDialog.tsx';
import { SelectField, TextField } from './ExpressionInput.tsx';
import { ListField } from './ListField.tsx';
import { FieldMapEditor } from './FieldMapEditor.tsx';
import { closeDeletedMachine } from './machine-lifecycle.ts';

/** The machine panel: description, initial state, context fields and event payload types, named guards and actions. */
export function MachinePanel() {
  const spec = useEditor((s) => s.spec)!;
  const apply = useEditor((s) => s.apply);
  const machineId = useEditor((s) => s.machineId);
  const baseVersion = useEditor((s) => s.baseVersion);
  const [newEvent, setNewEvent] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const set = (key: string, value: unknown, coalesce = false) =>
    apply((s) => setAt(s, `/${key}`, value), { coalesce: coalesce ? `/${key}` : undefined });
  const events = spec.events ?? {};
  const eventOk = /^[A-Z][A-Z0-9_]*$/.test(newEvent) && !(newEvent in events);
  return (
    <div className="panel" data-testid="machine-panel">
      <h2>
        Machine <span className="mono">{spec.id}</span>
      </h2>
      <TextField label="Description" value={spec.description ?? ''} multiline onChange={(v) => set('description', v || undefined, true)} />
      <SelectField
        label="Initial state"
        value={spec.initial ?? ''}
        options={[['', '(none)'], ...Object.keys(spec.states ?? {}).map((n): [string, string] => [n, n])]}
        onChange={(v) => set('initial', v || undefined)}
      />
      <fieldset className="group">
        <legend>Context</legend>
        <FieldMapEditor
          value={(spec.context ?? {}) as Record<string, FieldType>}
          onChange={(v) => set('context', v)}
          testId="context-fields"
          allowDefault
        />
      </fieldset>
      <fieldset className="group" data-testid="events-editor">
        <legend>Events and their payloads</legend>
        {Object.entries(events).map(([event, payload]) => (
          <div key={event} className="event-block">
            <div className="row">
              <strong className="mono">{event}</strong>
              <button type="button" className="icon" aria-label={`remove event ${event}`} onClick={() => set(`events/${event}`, undefined)}>
                ✕
              </button>
            </div>
            <FieldMapEditor
              value={payload as Record<string, FieldType>}
              onChange={(v) => set(`events/${event}`, v)}
              testId={`event-${event}`}
            />
          </div>
        ))}
        <div className="row">
          <input
            aria-label="new event name"
            placeholder="NEW_EVENT"
            className="mono"
            value={newEvent}
            onChange={(e) => setNewEvent(e.target.value.trim())}
          />
          <button
            type="button"
            disabled={!eventOk}
            onClick={() => {
              set(`events/${newEvent}`, {});
              setNewEvent('');
            }}
          >
            Add event
          </button>
        </div>
      </fieldset>
      <ListField
        label="Named guards (implemented in <id>.impl.ts; comma-separated)"
        value={Object.keys(spec.guards ?? {})}
        onChange={(list) => set('guards', list.length ? Object.fromEntries(list.map((g) => [g, spec.guards?.[g] ?? {}])) : undefined, true)}
      />
      <ListField
        label="Named actions (comma-separated)"
        value={Object.keys(spec.actions ?? {})}
        onChange={(list) =>
          set('actions', list.length ? Object.fromEntries(list.map((a) => [a, spec.actions?.[a] ?? {}])) : undefined, true)
        }
      />
      <button
        type="button"
        className="danger"
        disabled={baseVersion === null}
        onClick={() => setConfirmDelete(true)}
        data-testid="delete-machine"
        title="Delete this machine's spec and generated files (a hand-written impl.ts is kept)"
      >
        Delete machine
      </button>
      {confirmDelete && machineId !== undefined && baseVersion !== null && (
        <DeleteMachineDialog
          id={machineId}
          baseVersion={baseVersion}
          onCancel={() => setConfirmDelete(false)}
          onDeleted={(result) => {
            setConfirmDelete(false);
            void closeDeletedMachine(result);
          }}
        />
      )}
    </div>
  );
}
