import type { FlowSpec } from '@flowing/spec';
import { useCallback, useEffect, useMemo } from 'react';
import { graphOf } from '../store/graph-cache.ts';
import { useEditor } from '../store/editor-store.ts';
import { ContextPanel } from './ContextPanel.tsx';
import { EventForms } from './EventForms.tsx';
import { EventList } from './EventList.tsx';
import { graphMarks } from './graph-marks.ts';
import { HistoryPanel } from './history/HistoryPanel.tsx';
import { InspectGraph } from './InspectGraph.tsx';
import { useInspect, viewedIndex } from './inspect-store.ts';
import { measureHighlight } from './live-marks.ts';
import { SessionControls } from './SessionControls.tsx';
import { SessionsList } from './SessionsList.tsx';
import { SourcePicker } from './SourcePicker.tsx';
import { StartSessionForm } from './StartSessionForm.tsx';
import { versionAt } from './event-summary.ts';
import { useSessionAt } from './useSessionAt.ts';
import { useSessionsPoll } from './useSessionsPoll.ts';
import { useSessionStream } from './useSessionStream.ts';
import './inspect.css';
import { useHistory } from './history/history-store.ts';

/**
 * The spec the runtime serves for the machine (the one its code was generated from), else the editor's when the
 * editor has that machine open.
 */
function useServedSpec(machineId: string | undefined): { spec: FlowSpec | undefined; served: boolean | undefined } {
  const openSpec = useEditor((s) => s.spec);
  const openId = useEditor((s) => s.machineId);
  const runtimeMachines = useInspect((s) => s.runtimeMachines);
  return useMemo(() => {
    if (!machineId) return { spec: undefined, served: undefined };
    const editorSpec = openId === machineId ? openSpec : undefined;
    if (runtimeMachines === null) return { spec: editorSpec, served: undefined };
    const machine = runtimeMachines.find((m) => m.id === machineId);
    if (!machine) return { spec: editorSpec, served: false };
    return { spec: (machine.spec as FlowSpec | null) ?? editorSpec, served: true };
  }, [machineId, runtimeMachines, openSpec, openId]);
}

/** The selected session on the graph, its controls, events and context. */
function SessionPane({ spec, sessionId }: { spec: FlowSpec; sessionId: string }) {
  const events = useInspect((s) => s.events);
  const cursor = useInspect((s) => s.cursor);
  const index = viewedIndex({ events, cursor });
  const view = useSessionAt(events, index);
  const before = useSessionAt(events, index - 1);
  const live = useSessionAt(events, events.length - 1);
  const version = versionAt(events, index);
  const graph = graphOf(spec);
  const conversationFields = useMemo(
    () => Object.entries(spec.context ?? {}).flatMap(([field, type]) => (type.type === 'conversation' ? [field] : [])),
    [spec],
  );
  const marks = useMemo(() => graphMarks(graph, spec.id, events, index, view), [graph, spec.id, events, index, view]);
  const accepted = useMemo(() => {
    const liveMarks = graphMarks(graph, spec.id, [], -1, live);
    return new Set(
      graph.edges.filter((e) => e.data.kind === 'on' && liveMarks.active.has(e.source) && e.data.key !== undefined).map((e) => e.data.key!),
    );
  }, [graph, spec.id, live]);
  // The newest state change shown: the one whose highlight is measured from its arrival.
  let changed = -1;
  for (let i = index; i >= 0; i--)
    if (events[i]!.type === 'state.changed') {
      changed = i;
      break;
    }
  const changedEvent = changed >= 0 ? events[changed] : undefined;
  const markKey = `${sessionId}:${changedEvent?.seq ?? 0}:${marks.refusal?.seq ?? 0}`;
  const onPainted = useCallback(() => {
    if (changedEvent) measureHighlight(changedEvent.seq, changedEvent.at);
  }, [changedEvent]);
  return (
    <>
      <div className="inspect__center">
        <SessionControls sessionId={sessionId} live={live} />
        {version && (
          <p className="inspect-version" data-testid="inspect-version" data-version={version.version}>
            version {version.version.slice(0, 12)}
            {version.migratedFrom && ` (migrated from ${version.migratedFrom.slice(0, 12)})`}
          </p>
        )}
        <InspectGraph spec={spec} marks={marks} markKey={markKey} onPainted={onPainted} />
        {/* ── History slot: scrubber, step buttons, timeline, fork, export/open (studio/src/inspect/history/). ── */}
        <HistoryPanel />
      </div>
      <div className="inspect__right">
        <EventForms key={sessionId} spec={spec} sessionId={sessionId} accepted={accepted} />
        <EventList />
        <ContextPanel view={view} before={before} events={events} index={index} conversationFields={conversationFields} />
      </div>
    </>
  );
}

/**
 * The Inspect mode for the open machine: where sessions come from, the sessions list (live), Start with an input
 * form, and for the selected session the graph with its active states, the controls, events and context. The
 * step-through components (the history panel) render in the marked slot under the graph.
 */
export function InspectView({ machineId }: { machineId: string | undefined }) {
  const selected = useInspect((s) => s.selectedSessionId);
  const sessions = useInspect((s) => s.sessions);
  const selectedMachine = sessions.find((s) => s.sessionId === selected)?.machineId;
  // A session is drawn on its own machine's graph: the open machine's, or the one the runtime serves for it.
  const shownMachine = selectedMachine ?? machineId;
  const { spec } = useServedSpec(shownMachine);
  const fileOpen = useHistory((s) => s.file !== null);
  const { spec: openSpec, served: openServed } = useServedSpec(machineId);
  useSessionsPoll(machineId);
  useSessionStream();
  useEffect(() => {
    // Another machine opened from the toolbar: a selected session of the previous one is no longer shown.
    const state = useInspect.getState();
    const of = state.sessions.find((s) => s.sessionId === state.selectedSessionId)?.machineId;
    if (machineId && of && of !== machineId) state.selectSession(null);
  }, [machineId]);
  return (
    <main className="inspect" data-testid="inspect-view" data-machine={machineId ?? ''}>
      <div className="inspect__left">
        <SourcePicker />
        {!machineId && <p className="inspect-hint">Open a machine to inspect its sessions.</p>}
        {machineId && openServed === false && (
          <p className="inspect-notice" role="status" data-testid="inspect-generate-first">
            The runtime does not serve <strong>{machineId}</strong>: generate first (Edit mode → Generate), then reopen Inspect.
          </p>
        )}
        {openSpec && openServed !== false && <StartSessionForm key={openSpec.id} spec={openSpec} />}
        <SessionsList />
      </div>
      {spec && selected && spec.id === shownMachine ? (
        <SessionPane spec={spec} sessionId={selected} />
      ) : fileOpen && !selected ? (
        // A session file (opened here or by `flowing inspect FILE`): its graph, events and scrubber fill the window.
        <div className="inspect__center inspect__center--file">
          <HistoryPanel />
        </div>
      ) : (
        <div className="inspect__center inspect__center--empty">
          <p className="inspect-hint">
            {selected
              ? `The runtime serves no graph for ${shownMachine}, the machine of this session.`
              : 'Start a session or pick one from the list.'}
          </p>
          {/* ── History slot (an opened file shows here too). ── */}
          <HistoryPanel />
        </div>
      )}
    </main>
  );
}
