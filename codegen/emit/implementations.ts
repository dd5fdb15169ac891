import { propertyKey } from '../names.ts';
import { LINE_WIDTH, mapped, object, seq, type Doc, type Member } from './doc.ts';
import { compileAt, SITE_PARAMETER, type ExpressionSite } from './expressions.ts';
import { commentText } from './literal.ts';

/** Where a guard or assign sits: its site, and for typed parameters the event name or the invoked actor. */
export interface Place {
  /** A readable, stable name derived from the place, e.g. `fetchOrderDone1` (deduplicated by the table). */
  name: string;
  site: ExpressionSite;
  /** `on` sites: the event the transition handles. */
  event?: string;
  /** `onDone` sites: the actor whose output the expression reads. */
  actor?: string;
}

/** How a transition refers to a named guard or action: its name, and the dynamic params when it reads them. */
export type Reference = Doc;

/** The site's parameter, as a transition passes it and as the implementation declares it. */
function parameter(place: Place): { params: string; declaration: string } {
  switch (place.site) {
    case 'event': return { params: '({ event }) => event', declaration: `event: EventOf<${JSON.stringify(place.event)}>` };
    case 'done': return { params: '({ event }) => event.output', declaration: `output: Output<${JSON.stringify(place.actor)}>` };
    case 'error': return { params: '({ event }) => toFlowError(event.error)', declaration: 'error: FlowError' };
    case 'context': return { params: '', declaration: '' };
  }
}

/**
 * The guards and actions of `setup({ guards, actions })`: the spec's declared names first (implemented in
 * `<id>.impl.ts`), then one named implementation per inline guard and per transition's `assign`, each with its spec
 * text as a comment. Transitions refer to them by name, passing the event, output or error as params.
 */
export class ImplementationTable {
  readonly guards: Member[] = [];
  readonly actions: Member[] = [];
  /** What the module must declare or import for what was written: `EventOf`, `Output`, `toFlowError`, `asText`, ... */
  readonly uses = new Set<'EventOf' | 'Output' | 'FlowError' | 'assign' | 'toFlowError' | 'asText'>();
  private readonly guardNames: Set<string>;
  private readonly actionNames: Set<string>;

  constructor(declaredGuards: Member[], declaredActions: Member[]) {
    this.guards.push(...declaredGuards);
    this.actions.push(...declaredActions);
    this.guardNames = new Set(declaredGuards.map((m) => m.key!));
    this.actionNames = new Set(declaredActions.map((m) => m.key!));
  }

  /** Adds the inline guard `source` at `pointer` and returns how the transition refers to it. */
  guard(place: Place, source: string, pointer: string): Reference {
    const compiled = compileAt(source, place.site);
    const reads = SITE_PARAMETER[place.site];
    const usesParam = reads !== undefined && compiled.reads.has(reads);
    const name = unique(place.name, this.guardNames);
    this.guards.push({
      key: propertyKey(name),
      value: mapped(pointer, arrow(this.parameters(place, compiled.reads.has('context'), usesParam), compiled.doc)),
      comment: specText(source, compiled.source),
    });
    return this.reference(name, place, usesParam);
  }

  /** Adds one `assign` action for a transition's (or entry/exit block's) assignments; returns its reference. */
  assign(place: Place, assignments: Record<string, string>, pointer: (field: string) => string): Reference {
    const reads = SITE_PARAMETER[place.site];
    const fields = Object.entries(assignments).map(([field, source]) => ({ field, source, compiled: compileAt(source, place.site) }));
    const usesParam = reads !== undefined && fields.some((f) => f.compiled.reads.has(reads));
    const name = unique(place.name, this.actionNames);
    this.uses.add('assign');
    const members = fields.map(({ field, compiled }) => ({
      key: propertyKey(field),
      value: arrow(this.parameters(place, compiled.reads.has('context'), reads !== undefined && compiled.reads.has(reads)), compiled.doc),
      pointer: pointer(field),
    }));
    this.actions.push({
      key: propertyKey(name),
      value: seq('assign(', object(members), ')'),
      comment: fields.every((f) => specText(f.source, f.compiled.source) === undefined)
        ? undefined
        : commentText(fields.map((f) => `${f.field} = ${f.source}`).join('; '), COMMENT_WIDTH),
    });
    return this.reference(name, place, usesParam);
  }

  private reference(name: string, place: Place, usesParam: boolean): Reference {
    if (!usesParam) return JSON.stringify(name);
    if (place.site === 'error') this.uses.add('toFlowError');
    return object([{ key: 'type', value: JSON.stringify(name) }, { key: 'params', value: parameter(place).params }]);
  }

  /** `({ context })`, `(_, output: Output<"tool.x">)`, `({ context }, event: EventOf<"GO">)` or `()`. */
  private parameters(place: Place, readsContext: boolean, readsParam: boolean): string {
    if (!readsParam) return readsContext ? '({ context })' : '()';
    const declaration = parameter(place).declaration;
    this.uses.add(place.site === 'event' ? 'EventOf' : place.site === 'done' ? 'Output' : 'FlowError');
    return `(${readsContext ? '{ context }' : '_'}, ${declaration})`;
  }
}

const COMMENT_WIDTH = LINE_WIDTH - 16;

/** The spec's text of an expression for a comment, unless the generated code reads exactly the same. */
function specText(source: string, compiled: string): string | undefined {
  return source.trim() === compiled ? undefined : commentText(source, COMMENT_WIDTH);
}

/** `params => body`; a body that is a long `+` chain continues on the next lines. */
function arrow(params: string, body: Doc): Doc {
  return typeof body === 'string' || body.kind !== 'chain' ? seq(params, ' => ', body) : seq(params, ' =>', { ...body, lead: ' ' });
}

/** `name`, or `name_2`, `name_3`, ... when taken (two places can camelCase alike, or match a declared name). */
function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) candidate = `${name}_${i}`;
  taken.add(candidate);
  return candidate;
}
