import { useEffect, useRef, useState } from 'react';
import { DialogBackdrop } from './DialogBackdrop.tsx';

export interface PromptDialogProps {
  title: string;
  label: string;
  initial: string;
  validate?: (value: string) => string | undefined;
  onSubmit: (value: string) => void;
  onCancel: () => void;
}

/** A small modal asking for one value; Enter confirms, Escape cancels. */
export function PromptDialog({ title, label, initial, validate, onSubmit, onCancel }: PromptDialogProps) {
  const [value, setValue] = useState(initial);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
  }, []);
  const error = value === '' ? undefined : validate?.(value.trim());
  const submit = () => {
    const v = value.trim();
    if (v === '' || validate?.(v)) return;
    onSubmit(v);
  };
  return (
    <DialogBackdrop onDismiss={onCancel}>
      <div className="dialog" role="dialog" aria-modal="true" aria-label={title} data-testid="prompt-dialog">
        <h2>{title}</h2>
        <label>
          {label}
          <input
            ref={input}
            value={value}
            data-testid="prompt-input"
            onChange={(e) => setValue(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                submit();
              }
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                onCancel();
              }
            }}
          />
        </label>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog__buttons">
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" className="primary" data-testid="prompt-ok" disabled={value.trim() === '' || !!error} onClick={submit}>
            OK
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
