import { useState } from 'react';
import {
  addTransition,
  deleteTransition,
  markFallback,
  moveBranch,
  type GraphEdge,
  type TransitionKind,
  type TransitionPlace,
} from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { Icon } from './Icon.tsx';

const SITE_TITLES: Record<TransitionKind, string> = {
  on: 'on',
  after: 'after',
  always: 'always',
  done: 'when done (onDone)',
  onDone: 'invoke done (onDone)',
  onError: 'invoke error (onError)',
};

function siteTitle(edge: GraphEdge): string {
  if (edge.data.kind === 'on') return `on ${edge.data.key}`;
  if (edge.data.kind === 'after') return `after ${edge.data.key} ms`;
  return SITE_TITLES[edge.data.kind];
}

/** The branch lists of one place (an event, a delay, always, done, invoke done/error): reorder, fallback, remove. */
function SiteList({ edges }: { edges: GraphEdge[] }) {
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const isList = edges[0]!.data.form === 'array';
  const run = (edit: Parameters<typeof apply>[0]) => {
    let next: string | undefined;
    apply((s) => {
      const r = edit(s);
      if ('ok' in r && r.ok) next = r.pointer;
      return r;
    });
    return next;
  };
  return (
    <div className="transition-kind" data-testid={`site-${edges[0]!.data.sitePointer}`}>
      <h3>
        {siteTitle(edges[0]!)}
        {isList ? ' — first match wins' : ''}
      </h3>
      <ol className="branch-list">
        {edges.map((edge, i) => (
          <li key={edge.id} data-testid={`branch-${edge.data.kind}-${edge.data.key ?? ''}-${i}`}>
            <button
              type="button"
              className="link"
              title={edge.data.fullLabel}
              onClick={() => select({ kind: 'transition', id: edge.id }, true)}
            >
              {isList ? `${i + 1}. ` : ''}
              {edge.data.transition.guard === undefined
                ? ''
                : `[${typeof edge.data.transition.guard === 'string' ? edge.data.transition.guard : edge.data.transition.guard.ref}] `}
              → {edge.data.transition.target ?? '(stay)'}
            </button>
            {edge.data.branch.fallback && <span className="branch-list__tag">fallback</span>}
            {isList && (
              <>
                <button
                  type="button"
                  className="icon"
                  disabled={i === 0}
                  aria-label="move up"
                  title="Move up (checked earlier)"
                  data-testid="branch-up"
                  onClick={() => run((s) => moveBranch(s, edge.id, i - 1))}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="icon"
                  disabled={i === edges.length - 1}
                  aria-label="move down"
                  title="Move down (checked later)"
                  data-testid="branch-down"
                  onClick={() => run((s) => moveBranch(s, edge.id, i + 1))}
                >
                  ↓
                </button>
                {!edge.data.branch.fallback && (
                  <button
                    type="button"
                    className="icon"
                    aria-label="make fallback"
                    title="Make this the fallback: no guard, checked last"
                    data-testid="branch-fallback"
                    onClick={() => run((s) => markFallback(s, edge.id))}
                  >
                    <Icon name="fallback" />
                  </button>
                )}
              </>
            )}
            <button
              type="button"
              className="icon"
              aria-label="remove transition"
              title="Remove this transition"
              data-testid="branch-remove"
              onClick={() => apply((s) => deleteTransition(s, edge.data))}
            >
              ✕
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}

/**
 * Every transition of a state grouped by where it lives, and a row to add one of any kind: an event, a delay, always,
 * the state's own onDone (compound and parallel states), or a branch of its invoke's onDone/onError.
 */
export function TransitionsEditor({
  pointer,
  outgoing,
  stateNames,
  isGroup,
  hasInvoke,
}: {
  pointer: string;
  outgoing: GraphEdge[];
  stateNames: string[];
  isGroup: boolean;
  hasInvoke: boolean;
}) {
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const [kind, setKind] = useState<TransitionKind>('on');
  const [value, setValue] = useState('');
  const [target, setTarget] = useState('');
  const sites = new Map<string, GraphEdge[]>();
  for (const edge of outgoing) sites.set(edge.data.sitePointer, [...(sites.get(edge.data.sitePointer) ?? []), edge]);
  const kinds: Array<[TransitionKind, string]> = [
    ['on', 'on event'],
    ['after', 'after delay'],
    ['always', 'always'],
    ...(isGroup ? [['done', 'when done'] as [TransitionKind, string]] : []),
    ...(hasInvoke
      ? ([
          ['onDone', 'invoke done'],
          ['onError', 'invoke error'],
        ] as Array<[TransitionKind, string]>)
      : []),
  ];
  // An event field holding only digits means a delay (the quick way: type 5000, pick a target).
  const effective: TransitionKind = kind === 'on' && /^[0-9]+$/.test(value) ? 'after' : kind;
  const needsValue = effective === 'on' || effective === 'after';
  const add = () => {
    const place: TransitionPlace =
      effective === 'on' ? { kind: 'on', event: value } : effective === 'after' ? { kind: 'after', delay: value } : { kind: effective };
    let created: string | undefined;
    apply((s) => {
      const r = addTransition(s, pointer, place, target === '' ? {} : { target });
      if (r.ok) created = r.pointer;
      return r;
    });
    if (created) {
      select({ kind: 'transition', id: created }, true);
      setValue('');
      setTarget('');
    }
  };
  return (
    <fieldset className="group" data-testid="transitions-editor">
      <legend>Transitions</legend>
      {[...sites.values()].map((edges) => (
        <SiteList key={edges[0]!.data.sitePointer} edges={edges} />
      ))}
      {sites.size === 0 && <p className="muted">No transitions yet: add one below, or drag from this state to another on the canvas.</p>}
      <div className="row">
        <select
          aria-label="kind of transition"
          value={kind}
          data-testid="new-transition-kind"
          onChange={(e) => setKind(e.target.value as TransitionKind)}
        >
          {kinds.map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
        {needsValue && (
          <input
            aria-label="event or delay in ms"
            placeholder={kind === 'after' ? 'ms, e.g. 5000' : 'EVENT or 5000 (ms)'}
            className="mono new-transition__value"
            value={value}
            data-testid="new-transition-event"
            onChange={(e) => setValue(e.target.value.trim())}
          />
        )}
      </div>
      <div className="row">
        <select aria-label="target" value={target} data-testid="new-transition-target" onChange={(e) => setTarget(e.target.value)}>
          <option value="">target… (none: stay)</option>
          {stateNames.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={
            (needsValue && value === '') || (target === '' && effective !== 'on' && effective !== 'after' && effective !== 'always')
          }
          data-testid="new-transition-add"
          title="Add the transition"
          onClick={add}
        >
          Add
        </button>
      </div>
    </fieldset>
  );
}
