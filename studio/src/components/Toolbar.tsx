import { useState } from 'react';
import { specToGraph } from '../graph/index.ts';
import { useAddState } from '../hooks/useAddState.ts';
import { useEditor } from '../store/editor-store.ts';
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
  const { openMachine, undo, redo, save, generate, autoLayout, select, createTool } = useEditor.getState();
  const addState = useAddState();
  const [askTool, setAskTool] = useState(false);

  const addAtFreeSpot = () => {
    const spec = useEditor.getState().spec;
    if (!spec) return;
    const roots = specToGraph(spec).nodes.filter((n) => n.parentId === undefined);
    const right = Math.max(0, ...roots.map((n) => n.position.x + n.width));
    addState({ x: right + 80, y: Math.min(0, ...roots.map((n) => n.position.y)) });
  };

  return (
    <header className="toolbar" role="toolbar" aria-label="studio">
      <strong className="brand">Flowing studio</strong>
      <label className="toolbar__machine">
        <span className="sr-only">Machine</span>
        <select value={machineId ?? ''} data-testid="machine-select" onChange={(e) => {
          if (dirty && !window.confirm('Discard unsaved changes?')) return;
          void openMachine(e.target.value);
        }}>
          <option value="" disabled>Open a machine…</option>
          {machines.map((m) => <option key={m.id} value={m.id}>{m.id}{m.problems.some((p) => p.severity === 'error') ? ' (errors)' : ''}</option>)}
        </select>
      </label>
      <span className={dirty ? 'dirty dirty--yes' : 'dirty'} data-testid="dirty-flag">{machineId ? (dirty ? '● unsaved' : 'saved') : ''}</span>
      <div className="toolbar__group">
        <button type="button" disabled={!machineId} onClick={addAtFreeSpot} data-testid="add-state" title="Add a state (or double-click the canvas)">+ State</button>
        <button type="button" disabled={!machineId || busy === 'layout'} onClick={() => void autoLayout()} data-testid="auto-layout">Auto-layout</button>
        <button type="button" disabled={!canUndo} onClick={undo} data-testid="undo" title="Undo (Ctrl/Cmd+Z)">Undo</button>
        <button type="button" disabled={!canRedo} onClick={redo} data-testid="redo" title="Redo (Ctrl/Cmd+Shift+Z)">Redo</button>
        <button type="button" disabled={!machineId} onClick={() => select({ kind: 'machine' })} data-testid="machine-settings">Context & events</button>
        <button type="button" onClick={() => setAskTool(true)} data-testid="new-tool">New tool</button>
      </div>
      <div className="toolbar__group toolbar__group--end">
        <button type="button" disabled={!machineId || busy !== undefined} onClick={() => void save()} data-testid="save" title="Save (Ctrl/Cmd+S)">{busy === 'saving' ? 'Saving…' : 'Save'}</button>
        <button type="button" className="primary" disabled={!machineId || busy !== undefined || hasErrors} onClick={() => void generate()} data-testid="generate"
          title={hasErrors ? 'Fix the errors first' : 'Save, then generate the machine and registry'}>{busy === 'generating' ? 'Generating…' : 'Generate'}</button>
      </div>
      {askTool && (
        <PromptDialog
          title="New tool" label="Tool name (snake_case, e.g. send_email)" initial=""
          validate={(v) => (/^[a-z][a-z0-9_]*$/.test(v) ? undefined : 'Use lower-case letters, digits and _')}
          onCancel={() => setAskTool(false)}
          onSubmit={(name) => { setAskTool(false); void createTool(name); }}
        />
      )}
    </header>
  );
}
