import { createHash } from 'node:crypto';
import { camelCase, memberAccess, propertyKey } from '../names.ts';
import { DocWriter, LINE_WIDTH, mapped, object, seq, slot, type Doc, type Member } from './doc.ts';
import { compileAt, SITE_PARAMETER, type CompiledExpression, type ExpressionHelper, type ExpressionSite } from './expressions.ts';
import { commentText } from './literal.ts';
import type { EmitSpec } from '@flowing/spec';

/** Where a guard or assign sits: its site, and for typed parameters the event name or the invoked actor. */
export interface Place {
  /**
   * The place's name from what it means, never from a position: state, site and target, e.g.
   * `fetchOrderDoneToTraceShipment`, `askOrderIdEntry`. Reordering branches does not change it.
   */
  name: string;
  /** The index of the place's state in spec order: setup() lists implementations in the order of their states. */
  order: number;
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
    case 'event':
      return { params: '({ event }) => event', declaration: `event: EventOf<${JSON.stringify(place.event)}>` };
    case 'done':
      return { params: '({ event }) => event.output', declaration: `output: Output<${JSON.stringify(place.actor)}>` };
    case 'error':
      return { params: '({ event }) => toFlowError(event.error)', declaration: 'error: FlowError' };
    case 'context':
      return { params: '', declaration: '' };
  }
}

/** One place that uses an implementation: its place, its spec elements, its spec text as a comment, its reference. */
interface Use {
  place: Place;
  /** The spec element of the guard, or of one field of the assign. */
  pointer: (field?: string) => string;
  comment: string | undefined;
  fill: (text: string) => void;
}

/** One generated guard or action: its code (which identifies it), the uses that share it, and how to write it. */
interface Implementation {
  code: string;
  /** For an assign, the name that says what it does (`setReply`); guards have only their places. */
  meaning: string | undefined;
  uses: Use[];
  /** The implementation's doc, mapped to the spec elements of every use. */
  write: (uses: readonly Use[]) => Doc;
}

/**
 * The guards or the actions of `setup()`: the spec's declared names first, then one implementation per distinct
 * piece of code, however many places use it.
 *
 * Names come from meaning and never from position, so reordering branches renames nothing:
 * - an `assign` is named for the fields it sets (`setOrder`, `setRefundIdAndReply`) when no other assign sets the same
 *   fields; otherwise it takes the name of the one place that uses it (`askOrderIdEntry`), and an assign shared by
 *   several places keeps `setReply` when it is the only shared one;
 * - a guard is named for its place: state, site and target (`fetchOrderDoneToTraceShipment`); a guard several
 *   places share takes the first of their names in alphabetical order;
 * - names still taken twice (by a declared name, or by two pieces of code) all get `_` and the start of the sha256 of
 *   their code (`awaitDoneToPay_3fa2`), as many hex digits as make them unique.
 */
class Namespace {
  private readonly byCode = new Map<string, Implementation>();

  constructor(private readonly declared: Member[]) {}

  add(code: string, meaning: string | undefined, write: (uses: readonly Use[]) => Doc): Implementation {
    let implementation = this.byCode.get(code);
    if (!implementation) this.byCode.set(code, (implementation = { code, meaning, uses: [], write }));
    return implementation;
  }

  /** Names every implementation, fills the references, and returns setup()'s members. */
  resolve(): Member[] {
    const implementations = [...this.byCode.values()];
    const names = nameImplementations(implementations, new Set(this.declared.map((m) => m.key!)));
    const order = (i: Implementation) => Math.min(...i.uses.map((u) => u.place.order));
    const sorted = [...implementations].sort((a, b) => order(a) - order(b) || compare(names.get(a)!, names.get(b)!));
    const members = sorted.map((implementation): Member => {
      const name = names.get(implementation)!;
      implementation.uses.forEach((use) => use.fill(JSON.stringify(name)));
      const comments = implementation.uses
        .map((u) => u.comment)
        .filter((c): c is string => c !== undefined)
        .sort(compare);
      return { key: propertyKey(name), value: implementation.write(implementation.uses), comment: comments[0] };
    });
    return [...this.declared, ...members];
  }
}

/** A code-unit order that does not depend on the locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const MIN_HASH_DIGITS = 4;

function nameImplementations(implementations: Implementation[], declared: ReadonlySet<string>): Map<Implementation, string> {
  const meanings = new Map<string, number>();
  for (const { meaning } of implementations) if (meaning !== undefined) meanings.set(meaning, (meanings.get(meaning) ?? 0) + 1);
  const wanted = new Map<string, Implementation[]>();
  for (const implementation of implementations) {
    const places = [...new Set(implementation.uses.map((u) => u.place.name))].sort(compare);
    const meaning = implementation.meaning;
    const name =
      meaning !== undefined && meanings.get(meaning) === 1 ? meaning : places.length === 1 ? places[0]! : (meaning ?? places[0]!);
    wanted.set(name, [...(wanted.get(name) ?? []), implementation]);
  }
  const names = new Map<Implementation, string>();
  const taken = new Set(declared);
  const clashes: Array<[string, Implementation[]]> = [];
  for (const [name, group] of wanted) {
    if (group.length === 1 && !declared.has(name)) {
      names.set(group[0]!, name);
      taken.add(name);
    } else {
      clashes.push([name, group]);
    }
  }
  for (const [name, group] of clashes.sort(([a], [b]) => compare(a, b))) {
    const hashes = group.map((i) => createHash('sha256').update(i.code).digest('hex'));
    let digits = MIN_HASH_DIGITS;
    const candidates = () => hashes.map((h) => `${name}_${h.slice(0, digits)}`);
    while (digits < 64 && (new Set(candidates()).size < group.length || candidates().some((c) => taken.has(c)))) digits++;
    candidates().forEach((candidate, i) => {
      names.set(group[i]!, candidate);
      taken.add(candidate);
    });
  }
  return names;
}

/** `set` and the fields an assign writes: `setReply`, `setRefundIdAndReply`, `setAAndBAndC`, `setAAnd3More`. */
function pascal(channel: string): string {
  const c = camelCase(channel.replace(/\./g, '_'));
  return c.charAt(0).toUpperCase() + c.slice(1);
}

function assignMeaning(fields: string[]): string {
  const words = fields.map((f) => {
    const c = camelCase(f);
    return c.charAt(0).toUpperCase() + c.slice(1);
  });
  return `set${words.length <= 3 ? words.join('And') : `${words[0]}And${words.length - 1}More`}`;
}

/** The text a doc prints as: what identifies a piece of generated code. */
function codeOf(doc: Doc): string {
  return new DocWriter().write(doc).toString();
}

/**
 * The guards and actions of `setup({ guards, actions })`: the spec's declared names first (implemented in
 * `<id>.impl.ts`), then one named implementation per distinct inline guard and per distinct `assign`, each with its
 * spec text as a comment. Transitions refer to them by name, passing the event, output or error as params. Names are
 * decided by `resolve()`, once every place is known; print nothing before it.
 */
export class ImplementationTable {
  guards: Member[] = [];
  actions: Member[] = [];
  /** What the module must declare or import for what was written: `EventOf`, `Output`, `toFlowError`, `asText`, ... */
  readonly uses = new Set<
    'EventOf' | 'Output' | 'FlowError' | 'assign' | 'emit' | 'toFlowError' | 'asText' | 'ToolInput' | ExpressionHelper
  >();
  private readonly guardSpace: Namespace;
  private readonly actionSpace: Namespace;

  constructor(declaredGuards: Member[], declaredActions: Member[]) {
    this.guardSpace = new Namespace(declaredGuards);
    this.actionSpace = new Namespace(declaredActions);
  }

  /** Adds the inline guard `source` at `pointer` and returns how the transition refers to it. */
  guard(place: Place, source: string, pointer: string): Reference {
    const compiled = this.compile(source, place.site);
    const reads = SITE_PARAMETER[place.site];
    const usesParam = reads !== undefined && compiled.reads.has(reads);
    const body = (uses: readonly Use[]) =>
      mapped(
        uses.map((u) => u.pointer()),
        arrow(this.parameters(place, compiled.reads.has('context'), usesParam), compiled.doc),
      );
    const implementation = this.guardSpace.add(codeOf(body([])), undefined, body);
    return this.use(implementation, { place, pointer: () => pointer, comment: specText(source, compiled.source) }, usesParam);
  }

  /** Adds the `assign` of a transition's (or entry/exit block's) assignments; returns its reference. */
  assign(place: Place, assignments: Record<string, string>, pointer: (field: string) => string): Reference {
    const reads = SITE_PARAMETER[place.site];
    const fields = Object.entries(assignments).map(([field, source]) => ({ field, source, compiled: this.compile(source, place.site) }));
    const usesParam = reads !== undefined && fields.some((f) => f.compiled.reads.has(reads));
    this.uses.add('assign');
    const body = (uses: readonly Use[]) =>
      seq(
        'assign(',
        object(
          fields.map(({ field, compiled }) => ({
            key: propertyKey(field),
            value: arrow(
              this.parameters(place, compiled.reads.has('context'), reads !== undefined && compiled.reads.has(reads)),
              compiled.doc,
            ),
            pointer: uses.map((u) => u.pointer(field)),
          })),
        ),
        ')',
      );
    const implementation = this.actionSpace.add(codeOf(body([])), assignMeaning(fields.map((f) => f.field)), body);
    const comment = fields.every((f) => specText(f.source, f.compiled.source) === undefined)
      ? undefined
      : commentText(fields.map((f) => `${f.field} = ${f.source}`).join('; '), COMMENT_WIDTH);
    return this.use(implementation, { place, pointer: (field) => pointer(field!), comment }, usesParam);
  }

  /**
   * Adds one channel message (`emit` of a transition or entry/exit block): an XState `emit` of a `flowing.channel`
   * event, which the runtime logs as `channel.sent` and routes once the step is stored.
   */
  emit(place: Place, message: EmitSpec, pointer: (part: string) => string): Reference {
    const reads = SITE_PARAMETER[place.site];
    const key = this.compile(message.key, place.site);
    const data = Object.entries(message.data ?? {}).map(([field, source]) => ({ field, compiled: this.compile(source, place.site) }));
    const all = [key, ...data.map((d) => d.compiled)];
    const readsContext = all.some((c) => c.reads.has('context'));
    const usesParam = reads !== undefined && all.some((c) => c.reads.has(reads));
    this.uses.add('emit');
    const body = (uses: readonly Use[]) =>
      seq(
        'emit(',
        seq(
          this.parameters(place, readsContext, usesParam),
          ' => (',
          object([
            { key: 'type', value: '"flowing.channel"' },
            { key: 'channel', value: JSON.stringify(message.channel), pointer: uses.map((u) => u.pointer('channel')) },
            { key: 'key', value: seq('String(', key.doc, ')'), pointer: uses.map((u) => u.pointer('key')) },
            {
              key: 'data',
              value: object(
                data.map(({ field, compiled }) => ({
                  key: propertyKey(field),
                  value: compiled.doc,
                  pointer: uses.map((u) => u.pointer(`data/${field}`)),
                })),
              ),
            },
          ]),
          ')',
        ),
        ')',
      );
    const implementation = this.actionSpace.add(codeOf(body([])), `emit${pascal(message.channel)}`, body);
    return this.use(implementation, { place, pointer: (part) => pointer(part!), comment: undefined }, usesParam);
  }

  /**
   * Adds the `assign` that appends an agent call's new messages to its history field:
   * `assign({ conversation: ({ context }, output: Output<"llm.agent">) => [...context.conversation, ...output.messages] })`.
   * Tool calls and their results arrive together and in the model's order, so the pairs stay intact.
   */
  appendMessages(place: Place, field: string, pointer: string): Reference {
    this.uses.add('assign');
    const read = memberAccess('context', field);
    const body = (uses: readonly Use[]) =>
      seq(
        'assign(',
        object([
          {
            key: propertyKey(field),
            value: `${this.parameters(place, true, true)} => [...${read}, ...(output.messages ?? [])]`,
            pointer: uses.map((u) => u.pointer()),
          },
        ]),
        ')',
      );
    const implementation = this.actionSpace.add(codeOf(body([])), `append${pascal(field)}`, body);
    return this.use(implementation, { place, pointer: () => pointer, comment: undefined }, true);
  }

  /** Compiles an expression and notes the runtime functions it calls, for the module's imports. */
  compile(source: string, site: ExpressionSite): CompiledExpression {
    const compiled = compileAt(source, site);
    compiled.helpers.forEach((helper) => this.uses.add(helper));
    return compiled;
  }

  /** Names every guard and action (see Namespace) and fills in the references handed out so far. */
  resolve(): void {
    this.guards = this.guardSpace.resolve();
    this.actions = this.actionSpace.resolve();
  }

  private use(implementation: Implementation, use: Omit<Use, 'fill'>, usesParam: boolean): Reference {
    const { place } = use;
    const name = slot();
    implementation.uses.push({ ...use, fill: name.fill });
    if (!usesParam) return name.doc;
    if (place.site === 'error') this.uses.add('toFlowError');
    return object([
      { key: 'type', value: name.doc },
      { key: 'params', value: parameter(place).params },
    ]);
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
function arrow(params: string, body: CompiledExpression['doc']): Doc {
  return typeof body === 'string' || body.kind !== 'chain' ? seq(params, ' => ', body) : seq(params, ' =>', { ...body, lead: ' ' });
}
