import { graphOf } from '../store/graph-cache.ts';
import { useMemo } from 'react';
import { elementForProblem } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { keyedByText } from './list-keys.ts';

/** Every validation and codegen problem; clicking one selects and centres the element it belongs to. */
export function ProblemsPanel() {
  const spec = useEditor((s) => s.spec);
  const problems = useEditor((s) => s.problems);
  const codegenProblems = useEditor((s) => s.codegenProblems);
  const select = useEditor((s) => s.select);
  const graph = useMemo(() => (spec ? graphOf(spec) : undefined), [spec]);
  const all = [...problems, ...codegenProblems];
  const errors = all.filter((p) => p.severity === 'error').length;
  return (
    <section className="problems" aria-label="problems" data-testid="problems-panel">
      <h2>
        Problems{' '}
        <span className={errors > 0 ? 'count count--error' : 'count'} data-testid="problem-count">
          {errors} errors, {all.length - errors} warnings
        </span>
      </h2>
      <ul>
        {keyedByText(all, (p) => `${p.code} ${p.path} ${p.message}`).map(({ key, item: problem }) => (
          <li key={key}>
            <button
              type="button"
              className={`problem problem--${problem.severity}`}
              data-testid="problem-item"
              data-code={problem.code}
              onClick={() => {
                if (!graph) return;
                const target = elementForProblem(graph, problem.path);
                select(target.kind === 'machine' ? { kind: 'machine' } : target, true);
              }}
            >
              <span className="problem__severity">{problem.severity === 'error' ? '●' : '▲'}</span>
              <span className="problem__code">{problem.code}</span>
              <span className="problem__message">{problem.message}</span>
              <span className="problem__path mono">{problem.path || '/'}</span>
            </button>
          </li>
        ))}
        {all.length === 0 && <li className="muted">No problems.</li>}
      </ul>
    </section>
  );
}
