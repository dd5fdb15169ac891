import { useEffect, useState } from 'react';
import type { ExpressionRoot, TransitionObject } from '@flowing/spec';
import {
  changeTransitionDelay,
  changeTransitionEvent,
  deleteTransition,
  markFallback,
  moveBranch,
  readTransition,
  updateTransition,
  type SpecGraph,
} from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { AssignEditor } from './AssignEditor.tsx';
import { ExpressionInput, SelectField, TextField } from './ExpressionInput.tsx';
import { ListField } from './ListField.tsx';

const ROOTS: Record<string, ExpressionRoot[]> = {
  on: ['context', 'event'],
  onDone: ['context', 'output'],
  onError: ['context', 'error'],
  after: ['context'],
  always: ['context'],
  done: ['context'],
};

/** The side panel for a transition: event or delay, target, guard (parsed live), context updates, actions, description. */
export function TransitionPanel({ pointer, graph }: { pointer: string; graph: SpecGraph }) {
  const spec = useEditor((s) => s.spec)!;
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const edge = graph.edges.find((e) => e.id === pointer);
  const transition = readTransition(spec, pointer);
  const [key, setKey] = useState(edge?.data.key ?? '');
  useEffect(() => {
    setKey(edge?.data.key ?? '');
  }, [edge?.data.key]);
  if (!edge || !transition) return <p className="muted">This transition no longer exists.</p>;

  const roots = ROOTS[edge.data.kind] ?? ['context'];
  const update = (patch: Partial<TransitionObject>, coalesce?: string) =>
    apply((s) => updateTransition(s, pointer, patch), { coalesce: coalesce ? `${pointer}/${coalesce}` : undefined });
  const commitKey = () => {
    if (key === edge.data.key) return;
    let next: string | undefined;
    apply((s) => {
      const r =
        edge.data.kind === 'on'
          ? changeTransitionEvent(s, edge.data, edge.source, key)
          : changeTransitionDelay(s, edge.data, edge.source, key);
      if (r.ok) next = r.pointer;
      return r;
    });
    if (next) select({ kind: 'transition', id: next });
  };
  const moveTo = (to: number) => {
    let next: string | undefined;
    apply((s) => {
      const r = moveBranch(s, pointer, to);
      if (r.ok) next = r.pointer;
      return r;
    });
    if (next) select({ kind: 'transition', id: next });
  };
  const guard = transition.guard;
  const keyError =
    edge.data.kind === 'on' && key !== '' && !/^[A-Z][A-Z0-9_]*$/.test(key) ? 'Use capitals, digits and _ (e.g. USER_MESSAGE)' : undefined;

  return (
    <div className="panel" data-testid="transition-panel">
      <h2>
        Transition{' '}
        <span className="mono">
          {edge.data.sourceName} → {transition.target ?? '(stay)'}
        </span>
      </h2>
      <p className="muted" data-testid="transition-kind">
        Kind: {edge.data.kind}
        {edge.data.form === 'array'
          ? ` (#${edge.data.index + 1} of ${edge.data.branch.of} in a guarded list: the first whose guard holds is taken)`
          : ''}
        {edge.data.branch.fallback ? ' · the fallback' : ''}
      </p>
      {edge.data.form === 'array' && (
        <div className="row">
          <button
            type="button"
            disabled={edge.data.index === 0}
            data-testid="transition-up"
            title="Check this branch earlier"
            onClick={() => moveTo(edge.data.index - 1)}
          >
            ↑ Earlier
          </button>
          <button
            type="button"
            disabled={edge.data.index === edge.data.branch.of - 1}
            data-testid="transition-down"
            title="Check this branch later"
            onClick={() => moveTo(edge.data.index + 1)}
          >
            ↓ Later
          </button>
          {!edge.data.branch.fallback && (
            <button
              type="button"
              data-testid="transition-fallback"
              title="No guard, checked last: taken when no other branch matches"
              onClick={() => {
                let next: string | undefined;
                apply((s) => {
                  const r = markFallback(s, pointer);
                  if (r.ok) next = r.pointer;
                  return r;
                });
                if (next) select({ kind: 'transition', id: next });
              }}
            >
              Make fallback
            </button>
          )}
        </div>
      )}
      {edge.data.kind === 'on' && (
        <TextField label="Event" value={key} onChange={setKey} onCommit={commitKey} error={keyError} testId="transition-event" />
      )}
      {edge.data.kind === 'after' && (
        <TextField label="After (ms)" value={key} onChange={setKey} onCommit={commitKey} testId="transition-delay" />
      )}
      <SelectField
        label="Target"
        value={transition.target ?? ''}
        testId="transition-target"
        options={[['', '(none: stay in the state)'], ...graph.nodes.map((n): [string, string] => [n.data.name, n.data.name])]}
        onChange={(v) => update({ target: v || undefined })}
      />
      {typeof guard === 'object' ? (
        <SelectField
          label="Named guard"
          value={guard.ref}
          options={[
            ...Object.keys(spec.guards ?? {}).map((g): [string, string] => [g, g]),
            ...(guard.ref in (spec.guards ?? {}) ? [] : [[guard.ref, `${guard.ref} (undeclared)`] as [string, string]]),
          ]}
          onChange={(v) => update({ guard: { ref: v } })}
        />
      ) : (
        <ExpressionInput
          label="Guard"
          value={guard ?? ''}
          roots={roots}
          testId="transition-guard"
          placeholder="always taken"
          onChange={(v) => update({ guard: v }, 'guard')}
        />
      )}
      <AssignEditor
        title="Context updates"
        value={transition.assign}
        contextFields={Object.keys(spec.context ?? {})}
        roots={roots}
        testId="transition-assign"
        onChange={(v) => update({ assign: v }, 'assign')}
      />
      <ListField
        label="Named actions (comma-separated)"
        value={transition.actions}
        onChange={(list) => update({ actions: list }, 'actions')}
      />
      <TextField
        label="Description"
        value={transition.description ?? ''}
        multiline
        onChange={(v) => update({ description: v }, 'description')}
      />
      <button
        type="button"
        className="danger"
        data-testid="transition-delete"
        onClick={() => {
          apply((s) => deleteTransition(s, edge.data));
          select(null);
        }}
      >
        Delete transition
      </button>
    </div>
  );
}
