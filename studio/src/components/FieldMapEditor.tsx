import { useState } from 'react';
import type { FieldType } from '@flowing/spec';
import { renameKey } from '../graph/index.ts';
import { splitList } from './list-text.ts';

const TYPES: FieldType['type'][] = ['string', 'number', 'boolean', 'enum', 'array', 'object', 'unknown', 'conversation'];

export interface FieldMapEditorProps {
  value: Record<string, FieldType>;
  onChange: (value: Record<string, FieldType>) => void;
  testId: string;
  /** Context fields may have defaults; payload fields may not. */
  allowDefault?: boolean;
  depth?: number;
}

/** Edits a map of typed fields (context, event payloads, extracted fields): name, type, optional, enum values, nesting. */
export function FieldMapEditor({ value, onChange, testId, allowDefault, depth = 0 }: FieldMapEditorProps) {
  const [newName, setNewName] = useState('');
  const setField = (name: string, field: FieldType | undefined) => {
    const next = { ...value };
    if (field === undefined) delete next[name];
    else next[name] = field;
    onChange(next);
  };
  const nameOk = /^[A-Za-z_][A-Za-z0-9_]*$/.test(newName) && !(newName in value);
  return (
    <div className="field-map" data-testid={testId}>
      {Object.entries(value).map(([name, field]) => (
        <div key={name} className="field-row" style={{ marginLeft: depth * 12 }}>
          <div className="row">
            <input
              aria-label="field name"
              defaultValue={name}
              className="mono field-row__name"
              onBlur={(e) => {
                const v = e.target.value.trim();
                if (v && v !== name && !(v in value)) onChange(renameKey(value, name, v));
                else e.target.value = name;
              }}
            />
            <select
              aria-label={`type of ${name}`}
              value={field.type}
              onChange={(e) => {
                const type = e.target.value as FieldType['type'];
                const { values: _v, items: _i, fields: _f, default: _d, ...rest } = field;
                setField(name, {
                  ...rest,
                  type,
                  ...(type === 'enum' ? { values: field.values ?? ['a'] } : {}),
                  ...(type === 'array' ? { items: field.items ?? { type: 'string' } } : {}),
                  ...(type === 'object' ? { fields: field.fields ?? {} } : {}),
                });
              }}
            >
              {TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
            <label className="check">
              <input
                type="checkbox"
                checked={!!field.optional}
                onChange={(e) => {
                  const { optional: _o, ...rest } = field;
                  setField(name, e.target.checked ? { ...rest, optional: true } : rest);
                }}
              />
              optional
            </label>
            <button type="button" className="icon" aria-label={`remove field ${name}`} onClick={() => setField(name, undefined)}>
              ✕
            </button>
          </div>
          {field.type === 'enum' && (
            <input
              aria-label={`values of ${name}`}
              className="mono"
              defaultValue={(field.values ?? []).join(', ')}
              onBlur={(e) => setField(name, { ...field, values: splitList(e.target.value) })}
            />
          )}
          {field.type === 'array' && (
            <select
              aria-label={`item type of ${name}`}
              value={field.items?.type ?? 'string'}
              onChange={(e) => setField(name, { ...field, items: { type: e.target.value as FieldType['type'] } })}
            >
              {TYPES.filter((t) => t !== 'enum' && t !== 'object' && t !== 'conversation').map((t) => (
                <option key={t} value={t}>
                  items: {t}
                </option>
              ))}
            </select>
          )}
          {field.type === 'object' && depth < 3 && (
            <FieldMapEditor
              value={field.fields ?? {}}
              onChange={(fields) => setField(name, { ...field, fields })}
              testId={`${testId}-${name}`}
              depth={depth + 1}
            />
          )}
          {allowDefault &&
            depth === 0 &&
            (field.type === 'string' || field.type === 'number' || field.type === 'boolean' || field.type === 'enum') && (
              <input
                aria-label={`default of ${name}`}
                placeholder="default (JSON, e.g. &quot;guest&quot; or 0)"
                className="mono"
                defaultValue={field.default === undefined ? '' : JSON.stringify(field.default)}
                onBlur={(e) => {
                  const { default: _d, ...rest } = field;
                  if (e.target.value.trim() === '') return setField(name, rest);
                  try {
                    setField(name, { ...rest, default: JSON.parse(e.target.value) });
                  } catch {
                    e.target.setCustomValidity('not JSON');
                    e.target.reportValidity();
                  }
                }}
              />
            )}
        </div>
      ))}
      <div className="row" style={{ marginLeft: depth * 12 }}>
        <input
          aria-label="new field name"
          placeholder="new field"
          value={newName}
          className="mono"
          onChange={(e) => setNewName(e.target.value)}
          data-testid={`${testId}-new`}
        />
        <button
          type="button"
          disabled={!nameOk}
          onClick={() => {
            setField(newName, { type: 'string' });
            setNewName('');
          }}
          data-testid={`${testId}-add`}
        >
          Add field
        </button>
      </div>
    </div>
  );
}
