import { useEditor } from '../store/editor-store.ts';

/** Shown over the canvas while a machine has at most one state and no transitions: how to start. */
export function EmptyHint() {
  const show = useEditor((s) => {
    const states = Object.values(s.spec?.states ?? {});
    return states.length <= 1 && states.every((st) => !st.on && !st.after && !st.always && !st.invoke && !st.states);
  });
  if (!show) return null;
  return (
    <div className="empty-hint" role="note" data-testid="empty-hint">
      <strong>Start your machine</strong>
      <ul>
        <li>
          <kbd>+ State</kbd> in the toolbar, or double-click the canvas, adds a state.
        </li>
        <li>
          Drag from a state's right-hand dot to another state (or back onto itself) to add a transition: an event, a delay or{' '}
          <em>always</em>.
        </li>
        <li>
          Select a state and choose “Calls: a tool” to invoke a tool; drag from its <em>done</em> or <em>error</em> port to branch.
        </li>
        <li>
          Press <kbd>?</kbd> for every shortcut.
        </li>
      </ul>
    </div>
  );
}
