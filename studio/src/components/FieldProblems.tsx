import type { SpecProblem } from '@flowing/spec';
import { isWithin } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';

/**
 * The validation problems of one field of the spec, under that field: each with its code and the pointer it names.
 * `within` also shows the problems of the values inside it (the entries of a list).
 */
export function FieldProblems({ at, within = false }: { at: string; within?: boolean }) {
  const problems = useEditor((s) => s.problems);
  const here = problems.filter((p: SpecProblem) => (within ? isWithin(p.path, at) : p.path === at));
  if (here.length === 0) return null;
  return (
    <>
      {here.map((p) => (
        <p
          key={`${p.code} ${p.path} ${p.message}`}
          className={p.severity === 'error' ? 'field-error' : 'field-warning'}
          role="alert"
          data-testid="field-problem"
          data-code={p.code}
          data-path={p.path}
        >
          {p.message} <span className="field-problem__where mono">{`${p.code} at ${p.path}`}</span>
        </p>
      ))}
    </>
  );
}
