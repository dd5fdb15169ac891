import { useId } from 'react';
import { parseExpression, parseTemplate, type ExpressionRoot } from '@flowing/spec';

export interface ExpressionInputProps {
  label: string;
  value: string;
  roots: readonly ExpressionRoot[];
  onChange: (value: string) => void;
  testId?: string;
  placeholder?: string;
  /** Template mode: text with {{ expression }} holes. */
  template?: boolean;
}

/** An expression (or prompt template) field that shows parse errors as you type. */
export function ExpressionInput({ label, value, roots, onChange, testId, placeholder, template }: ExpressionInputProps) {
  const id = useId();
  const result = value.trim() === '' ? undefined : template ? parseTemplate(value, roots) : parseExpression(value, roots);
  const error = result && !result.ok ? result.error.message : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {template ? (
        <textarea
          id={id}
          value={value}
          rows={3}
          placeholder={placeholder}
          data-testid={testId}
          aria-invalid={!!error}
          onChange={(e) => onChange(e.target.value)}
        />
      ) : (
        <input
          id={id}
          value={value}
          placeholder={placeholder}
          className="mono"
          data-testid={testId}
          aria-invalid={!!error}
          spellCheck={false}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
      {error && (
        <p className="field-error" role="alert" data-testid={testId ? `${testId}-error` : undefined}>
          {error}
        </p>
      )}
      <p className="field-hint">
        {template ? 'Text with {{ expression }} holes over ' : 'Expression over '}
        {roots.join(', ')}
      </p>
    </div>
  );
}

/** A plain text field with a label. */
export function TextField({
  label,
  value,
  onChange,
  testId,
  multiline,
  placeholder,
  onCommit,
  error,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  testId?: string;
  multiline?: boolean;
  placeholder?: string;
  onCommit?: () => void;
  error?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {multiline ? (
        <textarea
          id={id}
          value={value}
          rows={2}
          placeholder={placeholder}
          data-testid={testId}
          onChange={(e) => onChange(e.target.value)}
          onBlur={onCommit}
        />
      ) : (
        <input
          id={id}
          value={value}
          placeholder={placeholder}
          data-testid={testId}
          aria-invalid={!!error}
          onChange={(e) => onChange(e.target.value)}
          onBlur={onCommit}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && onCommit) {
              e.preventDefault();
              onCommit();
            }
          }}
        />
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A select with a label; `options` are [value, label] pairs. */
export function SelectField({
  label,
  value,
  options,
  onChange,
  testId,
}: {
  label: string;
  value: string;
  options: Array<[string, string]>;
  onChange: (value: string) => void;
  testId?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} data-testid={testId} onChange={(e) => onChange(e.target.value)}>
        {options.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
    </div>
  );
}
