import { memoryFacts, type FieldType, type MemorySpec } from '@flowing/spec';
import { toPointer } from '../graph/index.ts';
import { SelectField, TextField } from './ExpressionInput.tsx';
import { FieldMapEditor } from './FieldMapEditor.tsx';
import { FieldProblems } from './FieldProblems.tsx';
import { ListField } from './ListField.tsx';

/** A memory as edited: numbers a person typed that are not numbers stay as typed, so the schema names the field. */
type MemoryDraft = Omit<MemorySpec, 'window' | 'maxPromptTokens' | 'summarize'> & {
  window: number | string;
  maxPromptTokens?: number | string;
  summarize?: Omit<NonNullable<MemorySpec['summarize']>, 'after'> & { after: number | string };
};

const DEFAULT_WINDOW = 8;

/** A number when the text is one, else the text itself (empty: undefined). */
function numberOrText(text: string): number | string | undefined {
  if (text.trim() === '') return undefined;
  return Number.isFinite(Number(text)) ? Number(text) : text;
}

function drop<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The `memory` of a model call: the turns it sends verbatim (`window`), an optional prompt limit, and summaries of
 * older turns with the facts they keep and, for the offline scripted model, a pattern per fact. `at` is the call's
 * pointer; each field shows the problems validation finds there.
 */
export function MemoryEditor({
  at,
  memory,
  onChange,
}: {
  at: string;
  memory: MemorySpec | undefined;
  onChange: (next: MemorySpec | undefined, field: string) => void;
}) {
  const here = `${at}/memory`;
  const current = memory as MemoryDraft | undefined;
  const write = (next: MemoryDraft | undefined, field: string) =>
    onChange(next === undefined ? undefined : (drop(next) as MemorySpec), field);
  const summarize = current?.summarize;
  const keep = summarize?.keep;
  const names = Array.isArray(keep) ? keep : Object.keys(keep ?? {});
  const typed = keep !== undefined && !Array.isArray(keep);
  const patterns = summarize?.scripted?.patterns ?? {};
  const setSummarize = (next: MemoryDraft['summarize'], field: string) => write({ ...current!, summarize: next && drop(next) }, field);
  const setPattern = (fact: string, source: string) => {
    const nextPatterns = drop({ ...patterns, [fact]: source === '' ? undefined : source });
    const { patterns: _p, ...otherRules } = summarize?.scripted ?? {};
    const scripted = Object.keys(nextPatterns).length > 0 ? { ...otherRules, patterns: nextPatterns } : otherRules;
    setSummarize({ ...summarize!, scripted: Object.keys(scripted).length > 0 ? scripted : undefined }, `pattern-${fact}`);
  };

  return (
    <fieldset className="group" data-testid="memory-editor">
      <legend>Memory</legend>
      <label className="check">
        <input
          type="checkbox"
          data-testid="memory-enabled"
          checked={current !== undefined}
          onChange={(e) => write(e.target.checked ? { window: DEFAULT_WINDOW } : undefined, 'enabled')}
        />
        Send only the latest turns of the history
      </label>
      <FieldProblems at={here} />
      {current === undefined ? (
        <p className="muted">The call sends the whole conversation.</p>
      ) : (
        <>
          <TextField
            label="Window: turns sent verbatim"
            value={String(current.window ?? '')}
            testId="memory-window"
            onChange={(v) => write({ ...current, window: numberOrText(v) as number | string }, 'window')}
          />
          <FieldProblems at={`${here}/window`} />
          <TextField
            label="Max prompt tokens (empty: the call's max tokens)"
            value={current.maxPromptTokens === undefined ? '' : String(current.maxPromptTokens)}
            testId="memory-max-prompt-tokens"
            onChange={(v) => write({ ...current, maxPromptTokens: numberOrText(v) }, 'maxPromptTokens')}
          />
          <FieldProblems at={`${here}/maxPromptTokens`} />
          <label className="check">
            <input
              type="checkbox"
              data-testid="memory-summarize"
              checked={summarize !== undefined}
              onChange={(e) =>
                write({ ...current, summarize: e.target.checked ? { after: summaryThreshold(current.window) } : undefined }, 'summarize')
              }
            />
            Summarise older turns
          </label>
          <FieldProblems at={`${here}/summarize`} />
          {summarize && (
            <>
              <TextField
                label="Summarise once this many turns are not yet summarised"
                value={String(summarize.after ?? '')}
                testId="memory-summarize-after"
                onChange={(v) => setSummarize({ ...summarize, after: numberOrText(v) as number | string }, 'after')}
              />
              <FieldProblems at={`${here}/summarize/after`} />
              <SelectField
                label="Kept facts are"
                value={typed ? 'typed' : 'names'}
                testId="memory-keep-form"
                options={[
                  ['names', 'names (text facts)'],
                  ['typed', 'typed fields'],
                ]}
                onChange={(form) =>
                  setSummarize(
                    // Names become the optional text fields they stand for; typed fields keep their names.
                    { ...summarize, keep: form === 'typed' ? memoryFacts(current as MemorySpec) : names.length > 0 ? names : undefined },
                    'keep-form',
                  )
                }
              />
              {typed ? (
                <fieldset className="group">
                  <legend>Facts the summary keeps (typed)</legend>
                  <FieldMapEditor
                    value={keep as Record<string, FieldType>}
                    onChange={(v) => setSummarize({ ...summarize, keep: v }, 'keep')}
                    testId="memory-keep-fields"
                  />
                </fieldset>
              ) : (
                <ListField
                  label="Facts the summary keeps (comma-separated names)"
                  value={names}
                  testId="memory-keep"
                  onChange={(list) => setSummarize({ ...summarize, keep: list.length > 0 ? list : undefined }, 'keep')}
                />
              )}
              <FieldProblems at={`${here}/summarize/keep`} within />
              {[...names, ...Object.keys(patterns).filter((f) => !names.includes(f))].map((fact) => (
                <div key={fact}>
                  <TextField
                    label={`Offline pattern for ${fact} (scripted model, a regular expression)${names.includes(fact) ? '' : ' (not a kept fact)'}`}
                    value={patterns[fact] ?? ''}
                    testId={`memory-pattern-${fact}`}
                    onChange={(v) => setPattern(fact, v)}
                  />
                  <FieldProblems at={here + toPointer(['summarize', 'scripted', 'patterns', fact])} />
                </div>
              ))}
            </>
          )}
        </>
      )}
    </fieldset>
  );
}

/** A first summary threshold the validator accepts: above the window (twice it), or the default when it is not a number. */
function summaryThreshold(window: number | string): number {
  return typeof window === 'number' && window >= 1 ? window * 2 : DEFAULT_WINDOW * 2;
}
