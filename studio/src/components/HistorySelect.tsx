import type { FieldType } from '@flowing/spec';
import { SelectField } from './ExpressionInput.tsx';
import { FieldProblems } from './FieldProblems.tsx';

/**
 * Which conversation a model call reads (`history`): one of the machine's conversation fields, or none. A value that
 * names no conversation field stays selectable, so opening a spec never changes it; validation says what is wrong.
 */
export function HistorySelect({
  at,
  history,
  context,
  onChange,
}: {
  at: string;
  history: string | undefined;
  context: Record<string, FieldType> | undefined;
  onChange: (history: string) => void;
}) {
  const fields = Object.entries(context ?? {})
    .filter(([, type]) => type.type === 'conversation')
    .map(([name]) => `context.${name}`);
  const options: Array<[string, string]> = [['', '(none: no conversation)'], ...fields.map((f): [string, string] => [f, f])];
  if (history !== undefined && !fields.includes(history)) options.push([history, `${history} (not a conversation field)`]);
  return (
    <>
      <SelectField
        label="History: the conversation the call reads"
        value={history ?? ''}
        options={options}
        testId="llm-history"
        onChange={onChange}
      />
      {fields.length === 0 && (
        <p className="field-hint">Declare a context field of type conversation (machine panel) to give calls a shared history.</p>
      )}
      <FieldProblems at={`${at}/history`} />
    </>
  );
}
