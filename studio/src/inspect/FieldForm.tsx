import type { FieldMap } from '@flowing/spec';
import { useId } from 'react';
import { isJsonField, type RawValues } from './field-values.ts';

/**
 * Inputs generated from a spec field map (context or an event's payload): text, number, checkbox, a select for enums,
 * a group for objects with fields, JSON text for arrays and `unknown`. `testId` prefixes each input's data-testid.
 */
export function FieldForm({
  map,
  values,
  onChange,
  testId,
}: {
  map: FieldMap | undefined;
  values: RawValues;
  onChange: (values: RawValues) => void;
  testId: string;
}) {
  const formId = useId();
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return <p className="inspect-form__none">no fields</p>;
  return (
    <div className="inspect-form__fields">
      {entries.map(([name, type]) => {
        const id = `${testId}-${name}`;
        const label = (
          <span className="inspect-form__label">
            {name}
            <span className="inspect-form__type">
              {type.type}
              {type.optional ? '?' : ''}
            </span>
          </span>
        );
        const value = values[name];
        if (type.type === 'object' && type.fields) {
          return (
            <fieldset key={name} className="inspect-form__group">
              <legend>{label}</legend>
              <FieldForm
                map={type.fields}
                values={typeof value === 'object' ? value : {}}
                onChange={(next) => onChange({ ...values, [name]: next })}
                testId={id}
              />
            </fieldset>
          );
        }
        if (type.type === 'boolean') {
          return (
            <label key={name} className="inspect-form__field inspect-form__field--check">
              <input
                type="checkbox"
                data-testid={id}
                checked={value === true}
                onChange={(e) => onChange({ ...values, [name]: e.target.checked })}
              />
              {label}
            </label>
          );
        }
        const text = typeof value === 'string' ? value : '';
        const controlId = `${formId}${name}`;
        return (
          <label key={name} className="inspect-form__field" title={type.description} htmlFor={controlId}>
            {label}
            {type.type === 'enum' ? (
              <select id={controlId} data-testid={id} value={text} onChange={(e) => onChange({ ...values, [name]: e.target.value })}>
                <option value="">{type.optional ? '(none)' : 'choose…'}</option>
                {(type.values ?? []).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            ) : isJsonField(type) || type.type === 'object' ? (
              <textarea
                id={controlId}
                data-testid={id}
                rows={2}
                spellCheck={false}
                placeholder="JSON"
                value={text}
                onChange={(e) => onChange({ ...values, [name]: e.target.value })}
              />
            ) : (
              <input
                id={controlId}
                data-testid={id}
                type={type.type === 'number' ? 'number' : 'text'}
                value={text}
                onChange={(e) => onChange({ ...values, [name]: e.target.value })}
              />
            )}
          </label>
        );
      })}
    </div>
  );
}
