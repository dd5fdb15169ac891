import type { FlowSpec } from '@flowing/spec';
import { useState } from 'react';
import { FieldForm } from './FieldForm.tsx';
import { initialValues, toValue, type FieldProblem } from './field-values.ts';
import { runAction } from './inspect-actions.ts';

/**
 * Send an event: every event the machine declares, with a form generated from its payload fields. Events the active
 * states do not take are marked but still sendable, so a person can see the runtime refuse them.
 */
export function EventForms({ spec, sessionId, accepted }: { spec: FlowSpec; sessionId: string; accepted: ReadonlySet<string> }) {
  const names = Object.keys(spec.events ?? {});
  const [type, setType] = useState(names[0] ?? '');
  const [values, setValues] = useState(() => initialValues(spec.events?.[names[0] ?? '']));
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  if (names.length === 0) return <p className="inspect-hint">The machine declares no events.</p>;
  const payload = spec.events?.[type];
  const choose = (next: string) => {
    setType(next);
    setValues(initialValues(spec.events?.[next]));
    setProblems([]);
  };
  return (
    <form
      className="inspect-send"
      aria-label="send an event"
      onSubmit={(e) => {
        e.preventDefault();
        const { value, problems: found } = toValue(payload, values);
        setProblems(found);
        if (found.length > 0) return;
        void runAction(`Send ${type}`, (client) => client.sendEvent(sessionId, { ...value, type }));
      }}
    >
      <label className="inspect-send__type">
        Event
        <select value={type} onChange={(e) => choose(e.target.value)} data-testid="inspect-event-type">
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
              {accepted.has(name) ? '' : ' — not taken in the current state'}
            </option>
          ))}
        </select>
      </label>
      <FieldForm map={payload} values={values} onChange={setValues} testId={`event-${type}`} />
      {problems.map((p) => (
        <p key={p.path} className="inspect-error">
          {p.path} {p.message}
        </p>
      ))}
      <button
        type="submit"
        className={accepted.has(type) ? 'primary' : ''}
        data-testid="inspect-send"
        title={accepted.has(type) ? 'send it to the session' : 'the active states do not take it: the runtime will refuse it (and log why)'}
      >
        Send {type}
      </button>
    </form>
  );
}
