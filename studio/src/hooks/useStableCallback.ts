import { useCallback, useLayoutEffect, useRef } from 'react';

/**
 * A function whose identity never changes and that always calls the latest `fn`. React Flow copies every handler
 * prop into its store when it changes, and each copy re-runs the store selectors of every node and edge: a canvas
 * that passed new closures on each render paid that for each keystroke on a 300-state machine.
 */
export function useStableCallback<TArgs extends unknown[], TResult>(fn: (...args: TArgs) => TResult): (...args: TArgs) => TResult {
  const latest = useRef(fn);
  useLayoutEffect(() => {
    latest.current = fn;
  });
  return useCallback((...args: TArgs) => latest.current(...args), []);
}
