/** A span of generated text and the spec element (JSON pointer) it came from. */
export interface SourceRegion {
  start: number;
  end: number;
  pointer: string;
}

/** The innermost region containing `position`, i.e. the most specific spec element (the last, when several share it). */
export function findRegion(regions: readonly SourceRegion[], position: number): SourceRegion | undefined {
  let best: SourceRegion | undefined;
  for (const region of regions) {
    if (position < region.start || position >= region.end) continue;
    if (!best || region.end - region.start <= best.end - best.start) best = region;
  }
  return best;
}

/**
 * Every innermost region containing `position`: one, or several when one piece of generated code serves several spec
 * elements (an `assign` two transitions share), so an error in it is shown on each of them.
 */
export function findRegions(regions: readonly SourceRegion[], position: number): SourceRegion[] {
  const best = findRegion(regions, position);
  if (!best) return [];
  return regions.filter((r) => r.start === best.start && r.end === best.end);
}
