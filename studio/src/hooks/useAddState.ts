import { graphOf } from '../store/graph-cache.ts';
import { useCallback } from 'react';
import { addState, freshStateName } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

/** Returns a command that adds a new state (named `state_N`) at a position and selects it for renaming. */
export function useAddState(): (position: { x: number; y: number }, parentPointer?: string) => string | undefined {
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  return useCallback(
    (position, parentPointer) => {
      let created: string | undefined;
      apply((spec) => {
        const result = addState(spec, { name: freshStateName(spec), parentPointer, position });
        if (result.ok) created = result.pointer;
        return result;
      });
      if (created) select({ kind: 'state', id: created }, true);
      return created;
    },
    [apply, select],
  );
}

/** Returns a command that adds a state to the right of the top-level states (the toolbar's "+ State" and N). */
export function useAddStateAtFreeSpot(): () => void {
  const addState = useAddState();
  return useCallback(() => {
    const spec = useEditor.getState().spec;
    if (!spec) return;
    const roots = graphOf(spec).nodes.filter((n) => n.parentId === undefined);
    const right = Math.max(0, ...roots.map((n) => n.position.x + n.width));
    addState({ x: right + 80, y: Math.min(0, ...roots.map((n) => n.position.y)) });
  }, [addState]);
}
