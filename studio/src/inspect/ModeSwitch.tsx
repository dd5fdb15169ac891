import { useInspect } from './inspect-store.ts';

/** Edit | Inspect: which mode the studio shows for the open machine. */
export function ModeSwitch() {
  const mode = useInspect((s) => s.mode);
  const setMode = useInspect((s) => s.setMode);
  return (
    <div className="mode-switch" role="tablist" aria-label="mode">
      {(['edit', 'inspect'] as const).map((m) => (
        <button
          key={m}
          type="button"
          role="tab"
          aria-selected={mode === m}
          className={mode === m ? 'mode-switch__tab mode-switch__tab--on' : 'mode-switch__tab'}
          onClick={() => setMode(m)}
          data-testid={`mode-${m}`}
        >
          {m === 'edit' ? 'Edit' : 'Inspect'}
        </button>
      ))}
    </div>
  );
}
