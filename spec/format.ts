/**
 * Serialises a spec for saving: canonical key order for known objects, insertion order kept for maps
 * (states, events, context ...), 2-space indentation and a trailing newline, so that diffs stay small.
 */
export function formatSpec(spec: unknown): string {
  return JSON.stringify(canonical(spec, 'spec'), null, 2) + '\n';
}

type Shape = 'spec' | 'state' | 'transition' | 'invoke' | 'field' | 'position' | 'any';

const KEY_ORDER: Record<Exclude<Shape, 'any'>, string[]> = {
  spec: ['$schema', 'specVersion', 'id', 'description', 'models', 'context', 'events', 'guards', 'actions', 'initial', 'states', 'layout'],
  state: ['type', 'description', 'tags', 'initial', 'entry', 'exit', 'invoke', 'on', 'after', 'always', 'onDone', 'states'],
  transition: ['target', 'guard', 'assign', 'actions', 'description'],
  invoke: [
    'tool',
    'llm',
    'model',
    'description',
    'input',
    'labels',
    'fields',
    'system',
    'prompt',
    'tools',
    'maxIterations',
    'idempotencyKey',
    'timeoutMs',
    'retries',
    'scripted',
    'onDone',
    'onError',
  ],
  field: ['type', 'optional', 'description', 'values', 'items', 'fields', 'default'],
  position: ['x', 'y', 'width', 'height'],
};

function ordered(value: Record<string, unknown>, order: string[]): Array<[string, unknown]> {
  const known = order.filter((k) => k in value).map((k) => [k, value[k]] as [string, unknown]);
  const rest = Object.keys(value)
    .filter((k) => !order.includes(k))
    .sort()
    .map((k) => [k, value[k]] as [string, unknown]);
  return [...known, ...rest];
}

function mapOf(value: unknown, shape: Shape): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return canonical(value, 'any');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v, shape)]));
}

function transitionValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((t) => canonical(t, 'transition'));
  return typeof value === 'string' ? value : canonical(value, 'transition');
}

function canonical(value: unknown, shape: Shape): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v, 'any'));
  if (!value || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  if (shape === 'any') return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, canonical(v, 'any')]));
  const out: Record<string, unknown> = {};
  for (const [key, child] of ordered(object, KEY_ORDER[shape])) {
    if (shape === 'spec' && key === 'states') out[key] = mapOf(child, 'state');
    else if (shape === 'spec' && key === 'layout') out[key] = mapOf(child, 'position');
    else if (shape === 'spec' && key === 'context') out[key] = mapOf(child, 'field');
    else if (shape === 'spec' && key === 'events')
      out[key] = Object.fromEntries(Object.entries(child as object).map(([e, p]) => [e, mapOf(p, 'field')]));
    else if (shape === 'state' && key === 'states') out[key] = mapOf(child, 'state');
    else if (shape === 'state' && (key === 'on' || key === 'after'))
      out[key] = Object.fromEntries(Object.entries(child as object).map(([e, t]) => [e, transitionValue(t)]));
    else if (shape === 'state' && (key === 'always' || key === 'onDone')) out[key] = transitionValue(child);
    else if (shape === 'state' && key === 'invoke') out[key] = canonical(child, 'invoke');
    else if (shape === 'invoke' && (key === 'onDone' || key === 'onError')) out[key] = transitionValue(child);
    else if (shape === 'invoke' && key === 'fields') out[key] = mapOf(child, 'field');
    else if (shape === 'field' && key === 'fields') out[key] = mapOf(child, 'field');
    else if (shape === 'field' && key === 'items') out[key] = canonical(child, 'field');
    else out[key] = canonical(child, 'any');
  }
  return out;
}
