import { graphOf } from '../store/graph-cache.ts';
import { useEffect } from 'react';
import { deleteState, deleteTransition } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

function isTyping(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element) return false;
  return element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
}

/**
 * Global shortcuts (listed in ShortcutsDialog): undo/redo, save, Delete for the selection, Escape to clear it, `?` for
 * the list, F to fit, L to lay out, N to add a state. Typing in a field is left alone.
 */
export function useKeyboardShortcuts(commands: { fitView: () => void; addState: () => void }): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const store = useEditor.getState();
      const mod = event.metaKey || event.ctrlKey;
      const key = event.key.toLowerCase();
      if (mod && key === 's') {
        event.preventDefault();
        void store.save();
        return;
      }
      if (isTyping(event.target)) return;
      if (mod && key === 'z') {
        event.preventDefault();
        if (event.shiftKey) store.redo();
        else store.undo();
      } else if (mod && key === 'y') {
        event.preventDefault();
        store.redo();
      } else if ((event.key === 'Delete' || event.key === 'Backspace') && store.selection && store.spec) {
        const selection = store.selection;
        if (selection.kind === 'state') {
          event.preventDefault();
          store.apply((s) => deleteState(s, selection.id));
          store.select(null);
        } else if (selection.kind === 'transition') {
          const edge = graphOf(store.spec).edges.find((e) => e.id === selection.id);
          if (!edge) return;
          event.preventDefault();
          store.apply((s) => deleteTransition(s, edge.data));
          store.select(null);
        }
      } else if (event.key === '?' && !mod) {
        event.preventDefault();
        store.toggleShortcuts();
      } else if (!mod && !event.altKey && key === 'f' && store.spec) {
        event.preventDefault();
        commands.fitView();
      } else if (!mod && !event.altKey && key === 'l' && store.spec) {
        event.preventDefault();
        void store.autoLayout();
      } else if (!mod && !event.altKey && key === 'n' && store.spec) {
        event.preventDefault();
        commands.addState();
      } else if (event.key === 'Escape') {
        if (store.showShortcuts) store.toggleShortcuts(false);
        else if (store.showGenerated) store.closeGenerated();
        else store.select(null);
      } else if (event.key === 'Enter' && store.selection && store.selection.kind !== 'machine') {
        const field = document.querySelector<HTMLElement>('.side-panel input, .side-panel select, .side-panel textarea');
        if (field) {
          event.preventDefault();
          field.focus();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [commands]);
}
