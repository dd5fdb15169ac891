import { diffLines } from 'diff';
import { useEffect, useMemo, useState } from 'react';
import { useEditor } from '../store/editor-store.ts';

/** The generated files, read-only, with a diff against what was on disk before; type errors link to the graph. */
export function GenerateView() {
  const generated = useEditor((s) => s.generated);
  const show = useEditor((s) => s.showGenerated);
  const close = useEditor((s) => s.closeGenerated);
  const [active, setActive] = useState(0);
  const [mode, setMode] = useState<'diff' | 'code'>('diff');
  const file = generated?.files[active];
  // Each part keyed by the lines where it starts in the old and the new file (every part takes at least one line).
  const parts = useMemo(() => {
    let oldLine = 0;
    let newLine = 0;
    return (file ? diffLines(file.previous ?? '', file.text) : []).map((part) => {
      const key = `${part.added ? '+' : part.removed ? '-' : '='}${oldLine},${newLine}`;
      if (!part.added) oldLine += part.count;
      if (!part.removed) newLine += part.count;
      return { key, part };
    });
  }, [file]);

  useEffect(() => {
    if (!show || !generated) return;
    requestAnimationFrame(() => {
      if (performance.getEntriesByName('flowing:generate:start').length === 0) return;
      performance.mark('flowing:generate:shown');
      performance.measure('flowing:generate', 'flowing:generate:start', 'flowing:generate:shown');
    });
  }, [show, generated]);

  if (!show || !generated) return null;
  return (
    <section className="generated" aria-label="generated code" data-testid="generated-view">
      <header className="generated__header">
        <h2>Generated {generated.ok ? '' : '(with errors)'}</h2>
        <div role="tablist" aria-label="generated files">
          {generated.files.map((f, i) => (
            <button
              key={f.path}
              type="button"
              role="tab"
              aria-selected={i === active}
              className={i === active ? 'tab tab--active' : 'tab'}
              data-testid={`generated-file-${f.path.split('/').pop()}`}
              onClick={() => setActive(i)}
            >
              {f.path.split('/').pop()}
              {f.changed ? ' •' : ''}
            </button>
          ))}
        </div>
        <div className="generated__modes">
          <button
            type="button"
            className={mode === 'diff' ? 'tab tab--active' : 'tab'}
            onClick={() => setMode('diff')}
            data-testid="generated-mode-diff"
          >
            Diff
          </button>
          <button
            type="button"
            className={mode === 'code' ? 'tab tab--active' : 'tab'}
            onClick={() => setMode('code')}
            data-testid="generated-mode-code"
          >
            Code
          </button>
          <button type="button" onClick={close} aria-label="close generated code" data-testid="generated-close">
            Close
          </button>
        </div>
      </header>
      {file && (
        <>
          <p className="muted">
            {file.path} — {file.previous === undefined ? 'new file' : file.changed ? 'changed' : 'unchanged'}
            {generated.timings.total !== undefined ? ` · ${Math.round(generated.timings.total)} ms` : ''}
          </p>
          {mode === 'code' ? (
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled from the keyboard
            <pre className="code" data-testid="generated-code" tabIndex={0}>
              {file.text}
            </pre>
          ) : (
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled from the keyboard
            <pre className="code code--diff" data-testid="generated-diff" tabIndex={0}>
              {parts.map(({ key, part }) => {
                const lines = part.value.replace(/\n$/, '').split('\n');
                if (!part.added && !part.removed && lines.length > 6) {
                  return (
                    <span key={key} className="diff-same">
                      {lines.slice(0, 3).join('\n')}
                      {'\n'}
                      <span className="diff-fold">⋯ {lines.length - 6} unchanged lines ⋯</span>
                      {'\n'}
                      {lines.slice(-3).join('\n')}
                      {'\n'}
                    </span>
                  );
                }
                return (
                  <span key={key} className={part.added ? 'diff-add' : part.removed ? 'diff-del' : 'diff-same'}>
                    {lines.map((l) => `${part.added ? '+ ' : part.removed ? '- ' : '  '}${l}`).join('\n')}
                    {'\n'}
                  </span>
                );
              })}
            </pre>
          )}
        </>
      )}
    </section>
  );
}
