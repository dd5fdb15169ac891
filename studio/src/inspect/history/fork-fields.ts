import { historyError } from './errors.ts';

/** One context field in the fork dialog: its value at the fork point, the text being edited, and whether it is pinned. */
export interface ForkField {
  name: string;
  original: unknown;
  text: string;
  pinned: boolean;
}

/** How a value is shown for editing: a string as it is, anything else as JSON. */
export function editText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** The dialog's fields for a context (top-level fields; a context that is not an object has none). */
export function forkFields(context: unknown): ForkField[] {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return [];
  return Object.entries(context).map(([name, original]) => ({ name, original, text: editText(original), pinned: false }));
}

/**
 * The context patch of the pinned fields: a field whose value was a string takes the text as it is (an empty text
 * stays an empty string); any other field's text is JSON (`null` clears an optional field). Throws
 * INSPECT_CONTEXT_NOT_JSON naming the field whose text is not JSON.
 */
export function pinnedPatch(fields: readonly ForkField[]): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const field of fields) {
    if (!field.pinned) continue;
    if (typeof field.original === 'string') {
      patch[field.name] = field.text;
      continue;
    }
    try {
      patch[field.name] = JSON.parse(field.text);
    } catch {
      throw historyError('INSPECT_CONTEXT_NOT_JSON', `context.${field.name}: ${JSON.stringify(field.text.slice(0, 60))} is not JSON`, {
        field: field.name,
      });
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
