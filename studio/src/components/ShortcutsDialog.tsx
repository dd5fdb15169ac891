import { useEditor } from '../store/editor-store.ts';
import { DialogBackdrop } from './DialogBackdrop.tsx';

/** Every keyboard shortcut and canvas gesture of the studio, one line each. */
export const SHORTCUTS: ReadonlyArray<[string, string]> = [
  ['?', 'Show or hide this list'],
  ['Ctrl/Cmd + S', 'Save'],
  ['Ctrl/Cmd + Z', 'Undo'],
  ['Ctrl/Cmd + Shift + Z, Ctrl/Cmd + Y', 'Redo'],
  ['Delete / Backspace', 'Delete the selected state or transition'],
  ['Enter', 'Edit the selection in the side panel'],
  ['Escape', 'Clear the selection, close a dialog or the generated code'],
  ['F', 'Fit the machine in view (text stays legible; large machines scroll)'],
  ['L', 'Auto-layout'],
  ['N', 'Add a state'],
  ['Double-click the canvas', 'Add a state there (inside a compound state: a child)'],
  ['Drag from a state’s blue dot', 'Add a transition: event, delay, always or done'],
  ['Drag from a done / error port', 'Add an onDone / onError branch of the call'],
  ['Drag a state into a compound one', 'Make it a child of that state'],
];

/** The shortcut list, opened with `?` or the toolbar's `?` button. */
export function ShortcutsDialog() {
  const show = useEditor((s) => s.showShortcuts);
  const toggle = useEditor((s) => s.toggleShortcuts);
  if (!show) return null;
  return (
    <DialogBackdrop onDismiss={() => toggle(false)}>
      <div className="dialog shortcuts" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" data-testid="shortcuts-dialog">
        <h2>Keyboard shortcuts and gestures</h2>
        <table>
          <tbody>
            {SHORTCUTS.map(([keys, what]) => (
              <tr key={keys}>
                <td>
                  <kbd>{keys}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="dialog__buttons">
          <button type="button" className="primary" onClick={() => toggle(false)}>
            Close
          </button>
        </div>
      </div>
    </DialogBackdrop>
  );
}
