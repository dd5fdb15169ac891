import { useEffect, useState } from 'react';
import { stateType, type StateSpec, type StateType } from '@flowing/spec';
import { checkStateName, deleteState, getAt, moveState, renameState, setAt, type GraphEdge, type SpecGraph } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { AssignEditor } from './AssignEditor.tsx';
import { SelectField, TextField } from './ExpressionInput.tsx';
import { ListField } from './ListField.tsx';
import { InvokeEditor } from './InvokeEditor.tsx';
import { TransitionsEditor } from './TransitionsEditor.tsx';

/** The side panel for a state: name, parent, type, initial child, description, tags, entry/exit updates, transitions, invoke. */
export function StatePanel({ pointer, graph }: { pointer: string; graph: SpecGraph }) {
  const spec = useEditor((s) => s.spec)!;
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const node = graph.nodes.find((n) => n.id === pointer);
  const state = getAt(spec, pointer) as StateSpec | undefined;
  const [name, setName] = useState(node?.data.name ?? '');
  useEffect(() => {
    setName(node?.data.name ?? '');
  }, [node?.data.name]);
  if (!node || !state) return <p className="muted">This state no longer exists.</p>;

  const stateNames = graph.nodes.map((n) => n.data.name);
  const contextFields = Object.keys(spec.context ?? {});
  const nameError = name === node.data.name ? undefined : checkStateName(spec, name, node.data.name)?.message;
  const commitName = () => {
    if (name === node.data.name || nameError) return;
    let next: string | undefined;
    apply((s) => {
      const r = renameState(s, pointer, name);
      if (r.ok) next = r.pointer;
      return r;
    });
    if (next) select({ kind: 'state', id: next });
  };
  const set = (key: string, value: unknown, coalesce = true) =>
    apply((s) => setAt(s, `${pointer}/${key}`, value === '' ? undefined : value), { coalesce: coalesce ? `${pointer}/${key}` : undefined });
  const children = Object.keys(state.states ?? {});
  const groups = graph.nodes.filter(
    (n) => (n.data.type === 'compound' || n.data.type === 'parallel') && n.id !== pointer && !n.id.startsWith(pointer + '/'),
  );
  const outgoing: GraphEdge[] = graph.edges.filter((e) => e.source === pointer);
  const type = stateType(state);

  return (
    <div className="panel" data-testid="state-panel">
      <h2>
        State <span className="mono">{node.data.name}</span>
      </h2>
      <TextField label="Name" value={name} onChange={setName} onCommit={commitName} error={nameError} testId="state-name-input" />
      <SelectField
        label="Inside"
        value={node.parentId ?? ''}
        testId="state-parent"
        options={[['', '(top level)'], ...groups.map((g): [string, string] => [g.id, g.data.path.join(' › ')])]}
        onChange={(v) => {
          let next: string | undefined;
          apply((s) => {
            const r = moveState(s, pointer, v || undefined, { x: 40, y: 56 });
            if (r.ok) next = r.pointer;
            return r;
          });
          if (next) select({ kind: 'state', id: next }, true);
        }}
      />
      <SelectField
        label="Type"
        value={type}
        testId="state-type"
        options={(['atomic', 'compound', 'parallel', 'final'] as StateType[]).map((t) => [t, t])}
        onChange={(v) => set('type', v === stateType({ ...state, type: undefined }) ? undefined : v, false)}
      />
      {type === 'compound' && children.length > 0 && (
        <SelectField
          label="Initial child"
          value={state.initial ?? ''}
          options={[['', '(none)'], ...children.map((c): [string, string] => [c, c])]}
          onChange={(v) => set('initial', v, false)}
        />
      )}
      {!node.data.isInitial && !node.data.isRegion && (
        <button
          type="button"
          onClick={() => apply((s) => setAt(s, node.parentId ? `${node.parentId}/initial` : '/initial', node.data.name))}
        >
          Make initial
        </button>
      )}
      <TextField label="Description" value={state.description ?? ''} multiline onChange={(v) => set('description', v)} />
      <ListField
        label="Tags (comma-separated)"
        value={state.tags}
        testId="state-tags"
        onChange={(list) => set('tags', list.length > 0 ? list : undefined)}
      />
      <AssignEditor
        title="On entry"
        value={state.entry?.assign}
        contextFields={contextFields}
        roots={['context']}
        testId="entry-assign"
        onChange={(v) => set('entry', v || state.entry?.actions ? { ...state.entry, assign: v } : undefined)}
      />
      <AssignEditor
        title="On exit"
        value={state.exit?.assign}
        contextFields={contextFields}
        roots={['context']}
        testId="exit-assign"
        onChange={(v) => set('exit', v || state.exit?.actions ? { ...state.exit, assign: v } : undefined)}
      />
      {type !== 'final' && (
        <TransitionsEditor
          pointer={pointer}
          outgoing={outgoing}
          stateNames={stateNames}
          isGroup={type === 'compound' || type === 'parallel'}
          hasInvoke={!!state.invoke}
        />
      )}
      {type !== 'final' && (
        <InvokeEditor
          pointer={pointer}
          state={state}
          stateNames={stateNames}
          outcomeEdges={outgoing.filter((e) => e.data.kind === 'onDone' || e.data.kind === 'onError')}
        />
      )}
      <button
        type="button"
        className="danger"
        data-testid="state-delete"
        onClick={() => {
          apply((s) => deleteState(s, pointer));
          select(null);
        }}
      >
        Delete state
      </button>
    </div>
  );
}
