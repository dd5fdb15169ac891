import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, useMemo } from 'react';
import { useAddStateAtFreeSpot } from '../hooks/useAddState.ts';
import { useFitView } from '../hooks/useFitView.ts';
import { useKeyboardShortcuts } from '../hooks/useKeyboardShortcuts.ts';
import { InspectView } from '../inspect/InspectView.tsx';
import { openSessionUrl } from '../inspect/history/open-file.ts';
import { useInspect } from '../inspect/inspect-store.ts';
import { useEditor } from '../store/editor-store.ts';
import { Canvas } from './Canvas.tsx';
import { GenerateView } from './GenerateView.tsx';
import { NoticeBar } from './NoticeBar.tsx';
import { ProblemsPanel } from './ProblemsPanel.tsx';
import { ShortcutsDialog } from './ShortcutsDialog.tsx';
import { SidePanel } from './SidePanel.tsx';
import { Toolbar } from './Toolbar.tsx';

/** Edit mode inside the React Flow provider (the shortcuts fit the view, so they need it; Inspect mode has none). */
function EditMode() {
  const fitView = useFitView();
  const addState = useAddStateAtFreeSpot();
  useKeyboardShortcuts(useMemo(() => ({ fitView, addState }), [fitView, addState]));
  return (
    <>
      <main className="workspace">
        <Canvas />
        <SidePanel />
        {/* Over the canvas and the side panel only: the problems list under them stays in view. */}
        <GenerateView />
      </main>
      <ProblemsPanel />
      <ShortcutsDialog />
    </>
  );
}

/** The studio: toolbar and notices, then the editor or the Inspect view of the open machine. */
function Studio() {
  const mode = useInspect((s) => s.mode);
  const machineId = useEditor((s) => s.machineId);
  useEffect(() => {
    const { init, openMachine } = useEditor.getState();
    // `flowing inspect FILE` opens the page with ?inspect=<file path>: start in Inspect mode, and open the file once
    // the machine is loaded (its graph is drawn only when the file's spec hash is the loaded spec's).
    const inspectFile = new URLSearchParams(window.location.search).get('inspect');
    if (inspectFile) useInspect.getState().setMode('inspect');
    void init().then(async () => {
      // The machine the address names, else the first one: a first visit shows a machine, not an empty canvas.
      const fromHash = decodeURIComponent(window.location.hash.slice(1));
      const { machines, machineId } = useEditor.getState();
      const first = machines.some((m) => m.id === fromHash) ? fromHash : machines[0]?.id;
      if (first && machineId === undefined) await openMachine(first);
      if (inspectFile) await openSessionUrl(inspectFile);
    });
  }, []);
  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => {
      if (useEditor.getState().dirty) event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, []);
  return (
    <div className="app">
      <Toolbar />
      <NoticeBar />
      {mode === 'edit' ? <EditMode /> : <InspectView machineId={machineId} />}
    </div>
  );
}

/** The studio: toolbar, canvas, side panel, problems, the generated-code view and the shortcut list. */
export function App() {
  return (
    <ReactFlowProvider>
      <Studio />
    </ReactFlowProvider>
  );
}
