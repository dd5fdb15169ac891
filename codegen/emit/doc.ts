import type { SourceRegion } from './writer.ts';

/** Generated lines stay under this many characters wherever the spec's own text allows it. */
export const LINE_WIDTH = 119;
const STEP = '  ';

/**
 * A piece of generated source, laid out by `printDoc`: objects, arrays, unions and `+` chains print on one line when
 * they fit, else one member per line. `mapped` remembers which spec element produced a span (for type errors).
 */
export type Doc =
  | string
  | { kind: 'seq'; parts: Doc[] }
  | { kind: 'mapped'; pointer: Pointers; doc: Doc }
  | { kind: 'group'; open: string; close: string; separator: ',' | ';'; members: Member[]; broken?: boolean }
  | { kind: 'union'; members: Doc[]; broken?: boolean }
  | { kind: 'chain'; operator: string; operands: Doc[]; lead?: string; whole?: string };

/** The spec element a span came from: one JSON pointer, or several when one piece of code serves several elements. */
export type Pointers = string | readonly string[];

/** One member of a group: `key: value`, or a bare value (arrays); comments force the group onto several lines. */
export interface Member {
  key?: string;
  value: Doc;
  pointer?: Pointers;
  comment?: string;
}

export const seq = (...parts: Doc[]): Doc => ({ kind: 'seq', parts });
export const mapped = (pointer: Pointers, doc: Doc): Doc => ({ kind: 'mapped', pointer, doc });
export const object = (members: Member[], broken = false): Doc => ({
  kind: 'group',
  open: '{',
  close: '}',
  separator: ',',
  members,
  broken,
});
export const typeLiteral = (members: Member[], broken = false): Doc => ({
  kind: 'group',
  open: '{',
  close: '}',
  separator: ';',
  members,
  broken,
});
export const array = (items: Doc[], broken = false): Doc => ({
  kind: 'group',
  open: '[',
  close: ']',
  separator: ',',
  members: items.map((value) => ({ value })),
  broken,
});

/**
 * A doc whose text is decided later, e.g. a name that depends on every place that uses it. Fill it before printing:
 * an unfilled slot prints as nothing.
 */
export function slot(): { doc: Doc; fill(text: string): void } {
  const parts: Doc[] = [];
  return {
    doc: { kind: 'seq', parts },
    fill: (text) => {
      parts.splice(0, parts.length, text);
    },
  };
}

/** Source text plus the spec pointer of each span, ready for the type checker's error mapping. */
export class DocWriter {
  private text = '';
  readonly regions: SourceRegion[] = [];

  get length(): number {
    return this.text.length;
  }

  /** Writes a doc starting at the current column, lines below indented by `indent` steps. */
  write(doc: Doc, indent = 0, trailing = 0): this {
    emit(doc, indent, this, trailing);
    return this;
  }

  raw(text: string): this {
    this.text += text;
    return this;
  }

  line(doc: Doc = '', indent = 0): this {
    if (doc !== '') this.raw(STEP.repeat(indent)).write(doc, indent, 0);
    return this.raw('\n');
  }

  column(): number {
    return this.text.length - this.text.lastIndexOf('\n') - 1;
  }

  region(pointers: Pointers, start: number): void {
    for (const pointer of typeof pointers === 'string' ? [pointers] : pointers)
      this.regions.push({ start, end: this.text.length, pointer });
  }

  toString(): string {
    return this.text;
  }
}

const flatCache = new WeakMap<object, string | null>();

/** The one-line form of a doc, or null when it must break (a comment, a forced break or a line break inside). */
export function flat(doc: Doc): string | null {
  if (typeof doc === 'string') return doc.includes('\n') ? null : doc;
  const cached = flatCache.get(doc);
  if (cached !== undefined) return cached;
  let result: string | null = null;
  switch (doc.kind) {
    case 'seq':
      result = joinFlat(doc.parts, '');
      break;
    case 'mapped':
      result = flat(doc.doc);
      break;
    case 'union':
      result = doc.broken ? null : joinFlat(doc.members, ' | ');
      break;
    case 'chain': {
      // A long string cut into pieces prints as one literal (`whole`) when it fits after all.
      const operands = doc.whole ?? joinFlat(doc.operands, ` ${doc.operator} `);
      result = operands === null ? null : `${doc.lead ?? ''}${operands}`;
      break;
    }
    case 'group': {
      if (doc.broken || doc.members.some((m) => m.comment !== undefined)) break;
      const members = doc.members.map((m) => {
        const v = flat(m.value);
        return v === null ? null : m.key === undefined ? v : `${m.key}: ${v}`;
      });
      if (members.some((m) => m === null)) break;
      if (members.length === 0) result = `${doc.open}${doc.close}`;
      else if (doc.open === '[') result = `[${members.join(', ')}]`;
      else result = `${doc.open} ${members.join(`${doc.separator} `)} ${doc.close}`;
    }
  }
  flatCache.set(doc, result);
  return result;
}

function joinFlat(parts: Doc[], separator: string): string | null {
  const flats = parts.map(flat);
  return flats.some((f) => f === null) ? null : flats.join(separator);
}

function fits(doc: Doc, out: DocWriter, trailing: number): boolean {
  const text = flat(doc);
  return text !== null && out.column() + text.length + trailing <= LINE_WIDTH;
}

function emit(doc: Doc, indent: number, out: DocWriter, trailing: number): void {
  if (typeof doc === 'string') {
    out.raw(doc.split('\n').join(`\n${STEP.repeat(indent)}`));
    return;
  }
  if (doc.kind === 'mapped') {
    const start = out.length;
    emit(doc.doc, indent, out, trailing);
    out.region(doc.pointer, start);
    return;
  }
  if (doc.kind === 'seq') {
    // What follows a part on its line counts against it: `({ ... })` must leave room for its closing `)` and `,`.
    doc.parts.forEach((part, i) => {
      const rest = doc.parts.slice(i + 1).reduce((width, next) => width + (flat(next)?.split('\n')[0]?.length ?? 0), 0);
      emit(part, indent, out, trailing + rest);
    });
    return;
  }
  const oneLine = fits(doc, out, trailing);
  if (doc.kind === 'group') {
    if (oneLine || doc.members.length === 0) {
      emitGroupFlat(doc, indent, out);
      return;
    }
    out.raw(doc.open);
    for (const member of doc.members) {
      if (member.comment !== undefined) out.raw(`\n${STEP.repeat(indent + 1)}// ${member.comment}`);
      out.raw(`\n${STEP.repeat(indent + 1)}`);
      emitMember(member, indent + 1, out, 1);
      out.raw(doc.separator);
    }
    out.raw(`\n${STEP.repeat(indent)}${doc.close}`);
    return;
  }
  if (doc.kind === 'union') {
    if (oneLine) {
      doc.members.forEach((m, i) => {
        if (i > 0) out.raw(' | ');
        emit(m, indent, out, 0);
      });
      return;
    }
    for (const member of doc.members) {
      out.raw(`\n${STEP.repeat(indent + 1)}| `);
      emit(member, indent + 1, out, 0);
    }
    return;
  }
  // A chain that does not fit continues on new lines, as many operands per line as fit.
  if (oneLine) {
    out.raw(doc.lead ?? '');
    if (doc.whole !== undefined) {
      out.raw(doc.whole);
      return;
    }
    doc.operands.forEach((operand, i) => {
      if (i > 0) out.raw(` ${doc.operator} `);
      emit(operand, indent, out, 0);
    });
    return;
  }
  emitChainBroken(doc, indent, out, trailing);
}

function emitChainBroken(doc: Extract<Doc, { kind: 'chain' }>, indent: number, out: DocWriter, trailing: number): void {
  out.raw(`\n${STEP.repeat(indent + 1)}`);
  doc.operands.forEach((operand, i) => {
    const last = i === doc.operands.length - 1;
    if (i > 0) {
      const width = doc.operator.length + 2 + (flat(operand) ?? '').length + (last ? trailing : doc.operator.length + 1);
      if (out.column() + width > LINE_WIDTH) out.raw(` ${doc.operator}\n${STEP.repeat(indent + 1)}`);
      else out.raw(` ${doc.operator} `);
    }
    emit(operand, indent + 1, out, 0);
  });
}

function emitGroupFlat(doc: Extract<Doc, { kind: 'group' }>, indent: number, out: DocWriter): void {
  if (doc.members.length === 0) {
    out.raw(`${doc.open}${doc.close}`);
    return;
  }
  const pad = doc.open === '[' ? '' : ' ';
  out.raw(doc.open + pad);
  doc.members.forEach((member, i) => {
    if (i > 0) out.raw(`${doc.separator} `);
    emitMember(member, indent, out, 0);
  });
  out.raw(pad + doc.close);
}

function emitMember(member: Member, indent: number, out: DocWriter, trailing: number): void {
  const start = out.length;
  const value = member.value;
  if (member.key !== undefined) {
    // A `+` chain that breaks starts on the next line, so the key line ends without a trailing space.
    const chain = typeof value !== 'string' && value.kind === 'chain';
    out.raw(chain ? `${member.key}:` : `${member.key}: `);
    emit(chain ? { ...value, lead: ' ' } : value, indent, out, trailing);
  } else {
    emit(value, indent, out, trailing);
  }
  if (member.pointer !== undefined) out.region(member.pointer, start);
}
