/** A span of generated text and the spec element (JSON pointer) it came from. */
export interface SourceRegion {
  start: number;
  end: number;
  pointer: string;
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
