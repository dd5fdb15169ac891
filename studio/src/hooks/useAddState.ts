import { useCallback } from 'react';
import { addState, freshStateName } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

/** Returns a command that adds a new state (named `state_N`) at a position and selects it for renaming. */
export function useAddState(): (position: { x: number; y: number }, parentPointer?: string) => string | undefined {
  const apply = useEditor((s) => s.apply);
  const select = useEditor((s) => s.select);
  return useCallback((position, parentPointer) => {
    let created: string | undefined;
    apply((spec) => {
      const result = addState(spec, { name: freshStateName(spec), parentPointer, position });
      if (result.ok) created = result.pointer;
      return result;
    });
    if (created) select({ kind: 'state', id: created }, true);
    return created;
  }, [apply, select]);
}
