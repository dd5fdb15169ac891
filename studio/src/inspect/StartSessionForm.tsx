import type { FlowSpec } from '@flowing/spec';
import { useState } from 'react';
import { FieldForm } from './FieldForm.tsx';
import { initialValues, toValue, type FieldProblem } from './field-values.ts';
import { startSession } from './inspect-actions.ts';

/** "New session": an input form generated from the machine's context fields (defaults filled in), then Start. */
export function StartSessionForm({ spec }: { spec: FlowSpec }) {
  const [values, setValues] = useState(() => initialValues(spec.context));
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [open, setOpen] = useState(false);
  return (
    <section className="inspect-start" aria-label="start a session">
      <div className="inspect-start__line">
        <button
          type="button"
          className="primary"
          data-testid="inspect-start"
          onClick={() => {
            const { value, problems: found } = toValue(spec.context, values, { partial: true });
            setProblems(found);
            if (found.length === 0) void startSession(spec.id, value);
          }}
        >
          Start session
        </button>
        <button type="button" onClick={() => setOpen(!open)} data-testid="inspect-start-input" aria-expanded={open}>
          {open ? 'Hide input' : 'Input…'}
        </button>
      </div>
      {open && <FieldForm map={spec.context} values={values} onChange={setValues} testId="input" />}
      {problems.map((p) => (
        <p key={p.path} className="inspect-error">
          {p.path} {p.message}
        </p>
      ))}
    </section>
  );
}
