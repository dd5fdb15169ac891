import type { GraphNode } from '../graph/index.ts';

/**
 * Measures `<name>` from the mark `<name>:start` to the next painted frame, when such a mark is pending (the figures
 * for the 300-state machine: a drag frame, an edit).
 */
export function markAfterPaint(name: string): void {
  if (performance.getEntriesByName(`${name}:start`, 'mark').length === 0) return;
  requestAnimationFrame(() => {
    if (performance.getEntriesByName(`${name}:start`, 'mark').length === 0) return;
    performance.measure(name, `${name}:start`);
    performance.clearMarks(`${name}:start`);
  });
}

/** Grows the saved size of the parents of a moved child so that they still hold it. */
export function growParents<T extends { layout?: Record<string, { x: number; y: number; width?: number; height?: number }> }>(
  spec: T,
  nodes: GraphNode[],
  id: string,
  position: { x: number; y: number },
  width: number,
  height: number,
): T {
  const node = nodes.find((n) => n.id === id);
  const parent = node?.parentId ? nodes.find((n) => n.id === node.parentId) : undefined;
  if (!parent) return spec;
  const saved = spec.layout?.[parent.data.layoutKey];
  const needW = Math.max(parent.width, position.x + width + 24);
  const needH = Math.max(parent.height, position.y + height + 24);
  if (saved && needW <= (saved.width ?? parent.width) && needH <= (saved.height ?? parent.height)) return spec;
  return {
    ...spec,
    layout: {
      ...(spec.layout ?? {}),
      [parent.data.layoutKey]: { x: saved?.x ?? parent.position.x, y: saved?.y ?? parent.position.y, width: needW, height: needH },
    },
  };
}
