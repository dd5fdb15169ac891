import {
  agentToolName,
  LLM_KINDS,
  type FieldType,
  type InvokeSpec,
  type LlmInvokeSpec,
  type MachineInvokeSpec,
  type MemorySpec,
  type StateSpec,
  type ToolInvokeSpec,
} from '@flowing/spec';
import { useState } from 'react';
import type { JsonSchema } from '../api.ts';
import { setAt, setOutcomeTarget, type GraphEdge } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { ExpressionInput, SelectField, TextField } from './ExpressionInput.tsx';
import { ListField } from './ListField.tsx';
import { FieldMapEditor } from './FieldMapEditor.tsx';
import { HistorySelect } from './HistorySelect.tsx';
import { MemoryEditor } from './MemoryEditor.tsx';

export interface InvokeEditorProps {
  pointer: string;
  state: StateSpec;
  stateNames: string[];
  outcomeEdges: GraphEdge[];
}

function schemaType(schema: JsonSchema | undefined): string {
  if (!schema) return 'unknown';
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  return Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'unknown');
}

/** The invoke of a state: a tool (picked from the palette, inputs mapped to expressions) or a model call, with outcomes. */
export function InvokeEditor({ pointer, state, stateNames, outcomeEdges }: InvokeEditorProps) {
  const tools = useEditor((s) => s.tools);
  const machines = useEditor((s) => s.machines);
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  const invoke = state.invoke;
  const at = `${pointer}/invoke`;
  const setInvoke = (next: InvokeSpec | undefined, coalesce?: string) =>
    apply((s) => setAt(s, at, next), { coalesce: coalesce ? `${at}/${coalesce}` : undefined });
  const setField = (key: string, value: unknown, coalesce = true) =>
    apply((s) => setAt(s, `${at}/${key}`, value === '' ? undefined : value), { coalesce: coalesce ? `${at}/${key}` : undefined });
  const kind = !invoke ? 'none' : 'tool' in invoke ? 'tool' : 'machine' in invoke ? 'machine' : invoke.llm;

  const changeKind = (next: string) => {
    const keep = invoke
      ? { description: invoke.description, timeoutMs: invoke.timeoutMs, onDone: invoke.onDone, onError: invoke.onError }
      : {};
    // Another kind of model call reads the same conversation the same way.
    if (invoke && 'llm' in invoke) Object.assign(keep, { history: invoke.history, memory: invoke.memory });
    const clean = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
    if (next === 'none') return setInvoke(undefined);
    if (next === 'tool') return setInvoke(clean({ tool: tools[0]?.name ?? 'my_tool', input: {}, ...keep }) as ToolInvokeSpec);
    if (next === 'machine') return setInvoke(clean({ machine: machines[0]?.id ?? 'my-machine', input: {}, ...keep }) as MachineInvokeSpec);
    const llm = next as LlmInvokeSpec['llm'];
    const base: Record<string, unknown> = { llm };
    if (llm === 'classify') Object.assign(base, { input: 'context.lastMessage', labels: ['yes', 'no'] });
    if (llm === 'extract') Object.assign(base, { input: 'context.lastMessage', fields: { value: { type: 'string', optional: true } } });
    if (llm === 'generate') Object.assign(base, { prompt: 'Reply to: {{ context.lastMessage }}' });
    if (llm === 'agent') Object.assign(base, { prompt: '{{ context.lastMessage }}', tools: [], maxIterations: 5 });
    setInvoke(clean({ ...base, ...keep }) as LlmInvokeSpec);
  };

  const targetOptions: Array<[string, string]> = [['', '(none)'], ...stateNames.map((n): [string, string] => [n, n])];
  const firstTarget = (outcome: 'onDone' | 'onError') => outcomeEdges.find((e) => e.data.kind === outcome)?.data.transition.target ?? '';

  return (
    <fieldset className="group" data-testid="invoke-editor">
      <legend>Invoke</legend>
      <SelectField
        label="Calls"
        value={kind}
        testId="invoke-kind"
        options={[
          ['none', 'nothing'],
          ['tool', 'a tool'],
          ['machine', 'a machine'],
          ...LLM_KINDS.map((k): [string, string] => [k, `model: ${k}`]),
        ]}
        onChange={changeKind}
      />
      {invoke && 'tool' in invoke && <ToolInvokeFields invoke={invoke} setField={setField} tools={tools} />}
      {invoke && 'machine' in invoke && <MachineInvokeFields invoke={invoke} setField={setField} machines={machines.map((m) => m.id)} />}
      {invoke && 'llm' in invoke && (
        <LlmInvokeFields
          at={at}
          invoke={invoke}
          setField={setField}
          setMemory={(next, field) => apply((s) => setAt(s, `${at}/memory`, next), { coalesce: `${at}/memory/${field}` })}
          tools={tools.map((t) => t.name)}
        />
      )}
      {invoke && (
        <>
          <TextField
            label="Timeout (ms)"
            value={invoke.timeoutMs === undefined ? '' : String(invoke.timeoutMs)}
            testId="invoke-timeout"
            onChange={(v) => setField('timeoutMs', v === '' ? undefined : Number.isFinite(Number(v)) ? Number(v) : v)}
          />
          <SelectField
            label="On success go to (onDone)"
            value={firstTarget('onDone')}
            options={targetOptions}
            testId="invoke-ondone-target"
            onChange={(v) => apply((s) => setOutcomeTarget(s, pointer, 'onDone', v || undefined))}
          />
          <SelectField
            label="On failure go to (onError)"
            value={firstTarget('onError')}
            options={targetOptions}
            testId="invoke-onerror-target"
            onChange={(v) => apply((s) => setOutcomeTarget(s, pointer, 'onError', v || undefined))}
          />
          {outcomeEdges.length > 0 && (
            <ul className="link-list">
              {outcomeEdges.map((edge) => (
                <li key={edge.id}>
                  <button type="button" className="link" onClick={() => select({ kind: 'transition', id: edge.id }, true)}>
                    {edge.data.label} → {edge.data.transition.target ?? '(stay)'}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <TextField label="Description" value={invoke.description ?? ''} onChange={(v) => setField('description', v)} multiline />
        </>
      )}
    </fieldset>
  );
}

/** A machine invoke: the machine its child session runs (one of the project's), and its input mapped from context. */
function MachineInvokeFields({
  invoke,
  setField,
  machines,
}: {
  invoke: MachineInvokeSpec;
  setField: (key: string, value: unknown, coalesce?: boolean) => void;
  machines: string[];
}) {
  const [newField, setNewField] = useState('');
  const mapped = invoke.input ?? {};
  const options = machines.includes(invoke.machine) ? machines : [invoke.machine, ...machines];
  const setMapping = (field: string, value: string | undefined) => {
    const next = { ...mapped };
    if (value === undefined) delete next[field];
    else next[field] = value;
    setField('input', next, true);
  };
  return (
    <>
      <SelectField
        label="Machine"
        value={invoke.machine}
        testId="invoke-machine"
        options={options.map((id): [string, string] => [id, id])}
        onChange={(v) => setField('machine', v, false)}
      />
      {!machines.includes(invoke.machine) && (
        <p className="field-error" role="alert">
          Machine '{invoke.machine}' is not in machines/.
        </p>
      )}
      <fieldset className="group" data-testid="machine-input-mappings">
        <legend>Input (child context field: expression)</legend>
        {Object.keys(mapped).length === 0 && <p className="muted">No input mapped yet.</p>}
        {Object.entries(mapped).map(([field, source]) => (
          <div key={field} className="row">
            <ExpressionInput
              label={field}
              value={source}
              roots={['context']}
              testId={`machine-input-${field}`}
              onChange={(v) => setMapping(field, v === '' ? undefined : v)}
            />
          </div>
        ))}
        <TextField
          label="Add input field (a context field of the child; Enter adds it)"
          value={newField}
          testId="machine-input-new"
          onChange={setNewField}
          onCommit={() => {
            if (newField.trim()) setMapping(newField.trim(), 'context.');
            setNewField('');
          }}
        />
      </fieldset>
    </>
  );
}

function ToolInvokeFields({
  invoke,
  setField,
  tools,
}: {
  invoke: ToolInvokeSpec;
  setField: (key: string, value: unknown, coalesce?: boolean) => void;
  tools: ReturnType<typeof useEditor.getState>['tools'];
}) {
  const tool = tools.find((t) => t.name === invoke.tool);
  const properties = tool?.inputSchema.properties ?? {};
  const required = new Set(tool?.inputSchema.required ?? []);
  const mapped = invoke.input ?? {};
  const fields = [...Object.keys(properties), ...Object.keys(mapped).filter((k) => !(k in properties))];
  const setMapping = (field: string, value: string | undefined) => {
    const next = { ...mapped };
    if (value === undefined) delete next[field];
    else next[field] = value;
    setField('input', next, true);
  };
  return (
    <>
      <div className="palette" role="listbox" aria-label="tool palette" data-testid="tool-palette">
        {tools.map((t) => (
          <button
            key={t.name}
            type="button"
            role="option"
            aria-selected={t.name === invoke.tool}
            className={`palette__item${t.name === invoke.tool ? ' palette__item--selected' : ''}`}
            data-testid={`tool-option-${t.name}`}
            onClick={() => setField('tool', t.name, false)}
            title={t.description}
          >
            <span className="palette__name">{t.name}</span>
            <span className={`risk risk--${t.risk}`}>{t.risk}</span>
            {t.idempotent && <span className="tag">idempotent</span>}
          </button>
        ))}
        {tools.length === 0 && <p className="muted">No tools in tools/ yet. Use “New tool”.</p>}
      </div>
      {!tool && (
        <p className="field-error" role="alert">
          Tool '{invoke.tool}' is not in tools/.
        </p>
      )}
      {tool?.description && <p className="muted">{tool.description}</p>}
      <fieldset className="group" data-testid="input-mappings">
        <legend>Input</legend>
        {fields.length === 0 && <p className="muted">This tool takes no input.</p>}
        {fields.map((field) => (
          <div key={field} className="row">
            <ExpressionInput
              label={`${field}${required.has(field) ? ' *' : ''}: ${schemaType(properties[field])}${properties[field] ? '' : ' (not an input of this tool)'}`}
              value={mapped[field] ?? ''}
              roots={['context']}
              testId={`input-mapping-${field}`}
              placeholder={required.has(field) ? 'required' : 'optional'}
              onChange={(v) => setMapping(field, v === '' ? undefined : v)}
            />
          </div>
        ))}
      </fieldset>
      <TextField label="Idempotency key (expression)" value={invoke.idempotencyKey ?? ''} onChange={(v) => setField('idempotencyKey', v)} />
      <TextField
        label="Retries"
        value={invoke.retries === undefined ? '' : String(invoke.retries)}
        testId="invoke-retries"
        onChange={(v) => setField('retries', v === '' ? undefined : Number.isFinite(Number(v)) ? Number(v) : v)}
      />
      {tool && (
        <p className="muted">
          {tool.idempotent ? 'Idempotent: retries are safe.' : 'Not idempotent: retries need an idempotency key.'}
          {tool.errors.length > 0 ? ` Errors: ${tool.errors.join(', ')}` : ''}
        </p>
      )}
    </>
  );
}

function LlmInvokeFields({
  at,
  invoke,
  setField,
  setMemory,
  tools,
}: {
  at: string;
  invoke: LlmInvokeSpec;
  setField: (key: string, value: unknown, coalesce?: boolean) => void;
  setMemory: (next: MemorySpec | undefined, field: string) => void;
  tools: string[];
}) {
  const kind = invoke.llm;
  const context = useEditor((s) => s.spec?.context);
  return (
    <>
      <TextField label="Model (empty: the machine's default)" value={invoke.model ?? ''} onChange={(v) => setField('model', v)} />
      {(kind === 'classify' || kind === 'extract') && (
        <ExpressionInput
          label="Text to read"
          value={invoke.input ?? ''}
          roots={['context']}
          onChange={(v) => setField('input', v)}
          testId="llm-input"
        />
      )}
      {kind === 'classify' && (
        <ListField
          label="Labels (comma-separated)"
          value={invoke.labels}
          testId="llm-labels"
          onChange={(list) => setField('labels', list)}
        />
      )}
      {kind === 'extract' && (
        <fieldset className="group">
          <legend>Fields to extract</legend>
          <FieldMapEditor
            value={(invoke.fields ?? {}) as Record<string, FieldType>}
            onChange={(v) => setField('fields', v, false)}
            testId="llm-fields"
          />
        </fieldset>
      )}
      <ExpressionInput
        template
        label={kind === 'generate' || kind === 'agent' ? 'Prompt' : 'Prompt (optional)'}
        value={invoke.prompt ?? ''}
        roots={['context']}
        onChange={(v) => setField('prompt', v)}
        testId="llm-prompt"
      />
      <ExpressionInput
        template
        label="System prompt (optional)"
        value={invoke.system ?? ''}
        roots={['context']}
        onChange={(v) => setField('system', v)}
        testId="llm-system"
      />
      <HistorySelect at={at} history={invoke.history} context={context} onChange={(v) => setField('history', v, false)} />
      <MemoryEditor at={at} memory={invoke.memory} onChange={setMemory} />
      {kind === 'agent' && (
        <>
          <fieldset className="group">
            <legend>Tools the agent may call</legend>
            {tools.map((t) => (
              <label key={t} className="check">
                <input
                  type="checkbox"
                  checked={(invoke.tools ?? []).some((x) => agentToolName(x) === t)}
                  onChange={(e) =>
                    setField(
                      'tools',
                      e.target.checked ? [...(invoke.tools ?? []), t] : (invoke.tools ?? []).filter((x) => agentToolName(x) !== t),
                      false,
                    )
                  }
                />
                {t}
              </label>
            ))}
          </fieldset>
          <TextField
            label="Max iterations"
            value={invoke.maxIterations === undefined ? '' : String(invoke.maxIterations)}
            onChange={(v) => setField('maxIterations', v === '' ? undefined : Number(v))}
          />
        </>
      )}
    </>
  );
}
