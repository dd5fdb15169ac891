import { useState } from 'react';
import { TextField } from './ExpressionInput.tsx';
import { listText, splitList } from './list-text.ts';

/**
 * A comma-separated list of names as one text field. It keeps what is typed (a trailing comma included) while that
 * still reads as the stored list, and shows the stored list when it changes otherwise (undo, another panel).
 */
export function ListField({
  label,
  value,
  onChange,
  testId,
  error,
}: {
  label: string;
  value: readonly string[] | undefined;
  onChange: (list: string[]) => void;
  testId?: string;
  error?: string;
}) {
  const [draft, setDraft] = useState<string | undefined>(undefined);
  return (
    <TextField
      label={label}
      value={listText(draft, value ?? [])}
      testId={testId}
      error={error}
      onChange={(text) => {
        setDraft(text);
        onChange(splitList(text));
      }}
    />
  );
}
