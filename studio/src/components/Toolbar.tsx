import { useState } from 'react';
import { useAddStateAtFreeSpot } from '../hooks/useAddState.ts';
import { ModeSwitch } from '../inspect/ModeSwitch.tsx';
import { useInspect } from '../inspect/inspect-store.ts';
import { useEditor } from '../store/editor-store.ts';
import { ListenBadge } from './ChannelBadges.tsx';
import { CostButton } from './CostPanel.tsx';
import { NewMachineButton } from './NewMachineButton.tsx';
import { PromptDialog } from './PromptDialog.tsx';

/** The top bar: machine picker, editing commands, Save, Generate and New tool. */
export function Toolbar() {
  const machines = useEditor((s) => s.machines);
  const machineId = useEditor((s) => s.machineId);
  const dirty = useEditor((s) => s.dirty);
  const busy = useEditor((s) => s.busy);
  const canUndo = useEditor((s) => s.past.length > 0);
  const canRedo = useEditor((s) => s.future.length > 0);
  const hasErrors = useEditor((s) => s.problems.some((p) => p.severity === 'error'));
  const { openMachine, undo, redo, save, generate, autoLayout, select, createTool, toggleShortcuts } = useEditor.getState();
  const addAtFreeSpot = useAddStateAtFreeSpot();
  const [askTool, setAskTool] = useState(false);
  const inspecting = useInspect((s) => s.mode === 'inspect');

  return (
    <header className="toolbar" role="toolbar" aria-label="studio">
      <strong className="brand">Flowing studio</strong>
      <label className="toolbar__machine">
        <span className="sr-only">Machine</span>
        <select
          value={machineId ?? ''}
          data-testid="machine-select"
          title="Open a machine (machines marked (errors) fail validation as saved)"
          onChange={(e) => {
            if (dirty && !window.confirm('Discard unsaved changes?')) return;
            void openMachine(e.target.value);
          }}
        >
          <option value="" disabled>
            Open a machine…
          </option>
          {machines.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
              {m.problems.some((p) => p.severity === 'error') ? ' (errors)' : ''}
            </option>
          ))}
        </select>
      </label>
      <ModeSwitch />
      {!inspecting && <NewMachineButton />}
      <span className={dirty ? 'dirty dirty--yes' : 'dirty'} data-testid="dirty-flag">
        {machineId ? (dirty ? '● unsaved' : 'saved') : ''}
      </span>
      {!inspecting && (
        <div className="toolbar__group">
          <button
            type="button"
            disabled={!machineId}
            onClick={addAtFreeSpot}
            data-testid="add-state"
            title="Add a state (N, or double-click the canvas)"
          >
            + State
          </button>
          <button
            type="button"
            disabled={!machineId || busy === 'layout'}
            onClick={() => void autoLayout()}
            data-testid="auto-layout"
            title="Lay the machine out top to bottom (L): states, routes and labels without overlaps"
          >
            {busy === 'layout' ? 'Laying out…' : 'Auto-layout'}
          </button>
          <button type="button" disabled={!canUndo} onClick={undo} data-testid="undo" title="Undo (Ctrl/Cmd+Z)">
            Undo
          </button>
          <button type="button" disabled={!canRedo} onClick={redo} data-testid="redo" title="Redo (Ctrl/Cmd+Shift+Z)">
            Redo
          </button>
          <button
            type="button"
            disabled={!machineId}
            onClick={() => select({ kind: 'machine' })}
            data-testid="machine-settings"
            title="Edit the machine: context fields, events, named guards and actions"
          >
            Context & events
          </button>
          <button type="button" onClick={() => setAskTool(true)} data-testid="new-tool" title="Create tools/<name>.ts as a typed stub">
            New tool
          </button>
          <button
            type="button"
            onClick={() => toggleShortcuts()}
            data-testid="shortcuts"
            title="Keyboard shortcuts and gestures (?)"
            aria-label="keyboard shortcuts"
          >
            ?
          </button>
        </div>
      )}
      <div className="toolbar__group toolbar__group--end">
        {!inspecting && <ListenBadge />}
        {!inspecting && <CostButton />}
        <button
          type="button"
          disabled={!machineId || busy !== undefined}
          onClick={() => void save()}
          data-testid="save"
          title="Save (Ctrl/Cmd+S)"
        >
          {busy === 'saving' ? 'Saving…' : 'Save'}
        </button>
        <button
          type="button"
          className="primary"
          disabled={!machineId || busy !== undefined || hasErrors}
          onClick={() => void generate()}
          data-testid="generate"
          title={hasErrors ? 'Fix the errors first' : 'Save, then generate the machine and registry'}
        >
          {busy === 'generating' ? 'Generating…' : 'Generate'}
        </button>
      </div>
      {askTool && (
        <PromptDialog
          title="New tool"
          label="Tool name (snake_case, e.g. send_email)"
          initial=""
          validate={(v) => (/^[a-z][a-z0-9_]*$/.test(v) ? undefined : 'Use lower-case letters, digits and _')}
          onCancel={() => setAskTool(false)}
          onSubmit={(name) => {
            setAskTool(false);
            void createTool(name);
          }}
        />
      )}
    </header>
  );
}
