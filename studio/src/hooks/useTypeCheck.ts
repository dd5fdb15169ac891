import { useEffect } from 'react';
import { hasErrors } from '@flowing/spec';
import { api } from '../api.ts';
import { useEditor } from '../store/editor-store.ts';

/** Quiet time after the last edit before the spec is sent for a type check. */
export const TYPE_CHECK_PAUSE_MS = 300;

/**
 * Type errors as you type: once edits pause, the edited spec goes to the studio server's warm code generator, and
 * the type errors of its expressions, input mappings and prompt holes come back as spec-pointer problems, shown on
 * the graph element and in the problems panel like Generate's. An answer for a spec that has changed since is
 * dropped; a spec with validation errors is not sent (its code cannot be generated), and its old type errors go.
 */
export function useTypeCheck(): void {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let latest = 0;
    // `data-type-check` on the page says whether a check is waiting or running (`pending`) or not (`idle`).
    const mark = (state: 'pending' | 'idle') => {
      document.documentElement.dataset.typeCheck = state;
    };
    const schedule = (spec: ReturnType<typeof useEditor.getState>['spec'], machineId: string | undefined) => {
      clearTimeout(timer);
      const round = ++latest;
      const done = () => {
        if (round === latest) mark('idle');
      };
      if (!spec || !machineId) return done();
      mark('pending');
      timer = setTimeout(() => {
        const state = useEditor.getState();
        if (state.spec !== spec) return done();
        if (hasErrors(state.problems)) {
          if (state.codegenProblems.length > 0) useEditor.setState({ codegenProblems: [] });
          return done();
        }
        api
          .check(machineId, spec)
          .then(
            (answer) => {
              const now = useEditor.getState();
              if (answer.superseded || now.spec !== spec || now.machineId !== machineId) return;
              useEditor.setState({ codegenProblems: answer.problems });
            },
            // A failed check is not an error of the spec: Generate still checks, and the next edit tries again.
            () => undefined,
          )
          .finally(done);
      }, TYPE_CHECK_PAUSE_MS);
    };
    const unsubscribe = useEditor.subscribe((state, previous) => {
      // Only edits: opening a machine does not check (the type check runs on the server's thread, and the first one
      // loads the checker, so it would hold up the requests of opening). The spec's own validation runs within the
      // pause (editor-store's VALIDATE_PAUSE_MS is shorter), so it is current when the timer fires.
      if (state.spec !== previous.spec && state.machineId === previous.machineId && previous.spec !== undefined)
        schedule(state.spec, state.machineId);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, []);
}
