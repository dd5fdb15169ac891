import { CodeBlockWriter } from 'ts-morph';

/** A span of generated text and the spec element (JSON pointer) it came from. */
export interface SourceRegion {
  start: number;
  end: number;
  pointer: string;
}

/** A code writer that remembers which spec element produced which span of output. */
export class MappedWriter {
  readonly writer = new CodeBlockWriter({ indentNumberOfSpaces: 2, newLine: '\n', useSingleQuote: false });
  readonly regions: SourceRegion[] = [];

  /** Runs `write` and records the span it produced as coming from `pointer`. */
  mapped(pointer: string, write: () => void): void {
    const start = this.writer.getLength();
    write();
    this.regions.push({ start, end: this.writer.getLength(), pointer });
  }

  toString(): string {
    return this.writer.toString();
  }
}

/** The innermost region containing `position`, i.e. the most specific spec element. */
export function findRegion(regions: readonly SourceRegion[], position: number): SourceRegion | undefined {
  let best: SourceRegion | undefined;
  for (const region of regions) {
    if (position < region.start || position >= region.end) continue;
    if (!best || region.end - region.start <= best.end - best.start) best = region;
  }
  return best;
}
