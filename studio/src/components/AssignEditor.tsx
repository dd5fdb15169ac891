import { useState } from 'react';
import type { ExpressionRoot } from '@flowing/spec';
import { ExpressionInput } from './ExpressionInput.tsx';

export interface AssignEditorProps {
  title: string;
  value: Record<string, string> | undefined;
  contextFields: string[];
  roots: readonly ExpressionRoot[];
  onChange: (value: Record<string, string> | undefined) => void;
  testId: string;
}

/** Context updates: one row per context field, each an expression. */
export function AssignEditor({ title, value, contextFields, roots, onChange, testId }: AssignEditorProps) {
  const entries = Object.entries(value ?? {});
  const free = contextFields.filter((f) => !(f in (value ?? {})));
  const [adding, setAdding] = useState('');
  const set = (field: string, expression: string | undefined) => {
    const next: Record<string, string> = {};
    for (const [k, v] of entries) {
      if (k !== field) next[k] = v;
      else if (expression !== undefined) next[k] = expression;
    }
    if (!(field in (value ?? {})) && expression !== undefined) next[field] = expression;
    onChange(Object.keys(next).length > 0 ? next : undefined);
  };
  return (
    <fieldset className="group" data-testid={testId}>
      <legend>{title}</legend>
      {entries.length === 0 && <p className="muted">No context updates.</p>}
      {entries.map(([field, expression]) => (
        <div key={field} className="row">
          <ExpressionInput
            label={`context.${field} =`}
            value={expression}
            roots={roots}
            onChange={(v) => set(field, v)}
            testId={`${testId}-${field}`}
          />
          <button type="button" className="icon" aria-label={`remove assignment to ${field}`} onClick={() => set(field, undefined)}>
            ✕
          </button>
        </div>
      ))}
      {free.length > 0 && (
        <div className="row">
          <select
            aria-label="context field to assign"
            value={adding}
            data-testid={`${testId}-add-field`}
            onChange={(e) => setAdding(e.target.value)}
          >
            <option value="">add an update…</option>
            {free.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
          <button
            type="button"
            disabled={adding === ''}
            data-testid={`${testId}-add`}
            onClick={() => {
              set(adding, '');
              setAdding('');
            }}
          >
            Add
          </button>
        </div>
      )}
    </fieldset>
  );
}
