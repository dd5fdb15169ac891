import { graphOf } from '../store/graph-cache.ts';
import { useMemo } from 'react';
import { useEditor } from '../store/editor-store.ts';
import { MachinePanel } from './MachinePanel.tsx';
import { StatePanel } from './StatePanel.tsx';
import { TransitionPanel } from './TransitionPanel.tsx';

/** The form for whatever is selected; the machine panel when nothing is. */
export function SidePanel() {
  const spec = useEditor((s) => s.spec);
  const selection = useEditor((s) => s.selection);
  const graph = useMemo(() => (spec ? graphOf(spec) : undefined), [spec]);
  if (!spec || !graph) return <aside className="side-panel" aria-label="properties" />;
  return (
    <aside className="side-panel" aria-label="properties">
      {selection?.kind === 'state' && <StatePanel key={selection.id} pointer={selection.id} graph={graph} />}
      {selection?.kind === 'transition' && <TransitionPanel key={selection.id} pointer={selection.id} graph={graph} />}
      {(!selection || selection.kind === 'machine') && <MachinePanel />}
    </aside>
  );
}
