import { useEffect } from 'react';
import { moveCursorTo, stepBy } from './cursor.ts';

function isTyping(target: HTMLElement): boolean {
  if (target.isContentEditable || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT') return true;
  // The scrubber (a range input) takes the arrows and Home/End itself.
  return target.tagName === 'INPUT';
}

/**
 * ←/→ step one event (Shift: ten), Home/End go to the first/last, while the focus is inside the Inspect view (or on
 * nothing while it is shown) and not in a field. The editor's shortcuts use none of these keys; React Flow's arrow-key moves apply to selected nodes in
 * the editor only, and the Inspect canvas does not select.
 */
export function useHistoryKeys(): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (!target || typeof target.closest !== 'function' || isTyping(target)) return;
      // Focus inside the Inspect view, or on nothing at all while it is shown (after a click on a non-focusable part).
      const onNothing = target === document.body || target === document.documentElement;
      if (!target.closest('[data-testid=inspect-view]') && !(onNothing && document.querySelector('[data-testid=inspect-view]'))) return;
      if (target.closest('[role=dialog]')) return;
      const { key } = event;
      if (key === 'ArrowLeft' || key === 'ArrowRight') {
        event.preventDefault();
        stepBy((key === 'ArrowLeft' ? -1 : 1) * (event.shiftKey ? 10 : 1));
      } else if (key === 'Home') {
        event.preventDefault();
        moveCursorTo(0);
      } else if (key === 'End') {
        event.preventDefault();
        moveCursorTo(Number.MAX_SAFE_INTEGER);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
