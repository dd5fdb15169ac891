import type { ReactNode } from 'react';

/**
 * The dimmed layer behind a modal dialog. A press on it, outside the dialog, closes the dialog: that press lands on a
 * button spread under the dialog (out of the tab order: from the keyboard, Escape and the dialog's own Cancel close it).
 */
export function DialogBackdrop({ onDismiss, children }: { onDismiss: () => void; children: ReactNode }) {
  return (
    <div className="dialog-backdrop">
      <button
        type="button"
        className="dialog-backdrop__dismiss"
        tabIndex={-1}
        aria-label="Close the dialog"
        data-testid="dialog-dismiss"
        onMouseDown={onDismiss}
      />
      {children}
    </div>
  );
}
