import { ReactFlowProvider } from '@xyflow/react';
import { useEffect } from 'react';
import { useKeyboardShortcuts } from '../hooks/useKeyboardShortcuts.ts';
import { useEditor } from '../store/editor-store.ts';
import { Canvas } from './Canvas.tsx';
import { GenerateView } from './GenerateView.tsx';
import { NoticeBar } from './NoticeBar.tsx';
import { ProblemsPanel } from './ProblemsPanel.tsx';
import { SidePanel } from './SidePanel.tsx';
import { Toolbar } from './Toolbar.tsx';

/** The studio: toolbar, canvas, side panel, problems and the generated-code view. */
export function App() {
  useKeyboardShortcuts();
  useEffect(() => {
    const { init, openMachine } = useEditor.getState();
    void init().then(() => {
      const fromHash = decodeURIComponent(window.location.hash.slice(1));
      if (fromHash && useEditor.getState().machines.some((m) => m.id === fromHash)) void openMachine(fromHash);
    });
  }, []);
  useEffect(() => {
    const warn = (event: BeforeUnloadEvent) => { if (useEditor.getState().dirty) event.preventDefault(); };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, []);
  return (
    <ReactFlowProvider>
      <div className="app">
        <Toolbar />
        <NoticeBar />
        <main className="workspace">
          <Canvas />
          <SidePanel />
        </main>
        <ProblemsPanel />
        <GenerateView />
      </div>
    </ReactFlowProvider>
  );
}
