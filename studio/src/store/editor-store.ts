import { create } from 'zustand';
import { knownMachine, useCost } from './cost-store.ts';
import { validateSpec, type FlowSpec, type SpecProblem, type ToolInfo } from '@flowing/spec';
import { api, type GenerateResponse, type MachineSummary, type ToolSummary } from '../api.ts';
import { ApiError, hasCode } from '../api-error.ts';
import type { EditResult, LayoutGeometry } from '../graph/index.ts';
import { layoutMachine } from './layout-service.ts';
import { placeForOpen, replaceQuick, type OpenPlacement } from './open-placement.ts';
import { toToolInfos } from './tool-info.ts';

/** What is selected: a state or transition (by its JSON pointer), the machine panel, or nothing. */
export type Selection = { kind: 'state'; id: string } | { kind: 'transition'; id: string } | { kind: 'machine' } | null;

/** A message shown above the canvas; `conflict` offers Reload, `invalid` offers Save as draft. */
export type Notice = { kind: 'info' | 'error' | 'conflict' | 'invalid' | 'stranding'; message: string } | null;

interface HistoryEntry {
  spec: FlowSpec;
  selection: Selection;
}

export interface EditorState {
  machines: MachineSummary[];
  tools: ToolSummary[];
  toolInfos: Record<string, ToolInfo>;
  machineId: string | undefined;
  spec: FlowSpec | undefined;
  /** sha256 of the file as loaded or last saved: the conflict token for Save. */
  baseVersion: string | null;
  dirty: boolean;
  past: HistoryEntry[];
  future: HistoryEntry[];
  selection: Selection;
  problems: SpecProblem[];
  /** Problems from the last Generate (type errors mapped to spec pointers). */
  codegenProblems: SpecProblem[];
  generated: GenerateResponse | undefined;
  showGenerated: boolean;
  notice: Notice;
  busy: 'loading' | 'saving' | 'generating' | 'layout' | undefined;
  /** Bumped to ask the canvas to centre the selection. */
  centerRequest: number;
  /** Bumped to ask the canvas to fit the whole machine. */
  fitRequest: number;
  /** The last elkjs layout: edge routes, label boxes and ports, valid while the states stay where it put them. */
  geometry: LayoutGeometry | undefined;
  /** The keyboard shortcut list (`?`) is open. */
  showShortcuts: boolean;
  lastCoalesce: { key: string; at: number } | undefined;
}

export interface EditorActions {
  init(): Promise<void>;
  refreshTools(): Promise<void>;
  openMachine(id: string): Promise<void>;
  /** The canvas drew the opened machine (its open is measured): the machine is validated now. */
  drawn(): void;
  reload(): Promise<void>;
  /** Applies an edit; `coalesce` merges quick edits of one field (typing) into one undo step. */
  apply(edit: (spec: FlowSpec) => FlowSpec | EditResult<FlowSpec>, options?: { coalesce?: string; select?: Selection }): boolean;
  undo(): void;
  redo(): void;
  select(selection: Selection, center?: boolean): void;
  autoLayout(): Promise<void>;
  save(draft?: boolean): Promise<boolean>;
  generate(): Promise<void>;
  createTool(name: string): Promise<boolean>;
  setNotice(notice: Notice): void;
  closeGenerated(): void;
  toggleShortcuts(show?: boolean): void;
}

const HISTORY_LIMIT = 200;
const VALIDATE_PAUSE_MS = 150;
let validateTimer: ReturnType<typeof setTimeout> | undefined;
/** The newest `openMachine` call: an older one that finishes later (a slower machine) must not replace it. */
let openTicket = 0;
const COALESCE_MS = 1200;
/**
 * An opened machine is validated once the canvas has drawn it (validation takes 0.1-0.3 s at 300 states and would
 * otherwise land between its first frame and the frame that fits it in view), or after this long at the latest.
 */
const OPEN_VALIDATE_MS = 1000;
let validateOnDraw = false;

function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

/** A layout failure as `STUDIO_LAYOUT_FAILED: what happened`, the code named once. */
function layoutFailure(err: unknown): string {
  const message = describe(err);
  return message.startsWith('STUDIO_LAYOUT_FAILED') ? message : `STUDIO_LAYOUT_FAILED: ${message}`;
}

/** The one editor store: the spec being edited, selection, undo/redo history, dirty flag and the server round trips. */
export const useEditor = create<EditorState & EditorActions>()((set, get) => {
  const validate = (spec: FlowSpec) =>
    validateSpec(spec, { tools: Object.keys(get().toolInfos).length > 0 ? get().toolInfos : undefined, resolveMachine: knownMachine })
      .problems;

  /**
   * Validates the spec as it is then, after `pauseMs`, or else right after the next painted frame: validation (about
   * 0.1 s at 300 states) never delays the frame that shows an opened machine or an edit.
   */
  const validateSoon = (pauseMs?: number) => {
    clearTimeout(validateTimer);
    const check = () => {
      const current = get().spec;
      if (!current) return;
      const start = performance.now();
      const problems = validate(current);
      performance.measure('flowing:validate', { start, detail: { machine: current.id } });
      set({ problems });
    };
    if (pauseMs !== undefined) validateTimer = setTimeout(check, pauseMs);
    else requestAnimationFrame(() => (validateTimer = setTimeout(check, 0)));
  };
  // The specs of invoked machines arrive after the machine opened: the budget and invoke checks that read them run again.
  useCost.subscribe((state, previous) => {
    if (state.machines !== previous.machines) validateSoon(0);
  });

  /**
   * The routes and label places of a machine drawn at its saved places: elkjs lays it out in the worker, and each
   * route whose two states are where that layout put them is drawn (a layout the studio saved fits throughout);
   * the others stay plain until the next Auto-layout. Dropped when another machine was opened or laid out since.
   */
  const routeInBackground = (ticket: number, later: Promise<LayoutGeometry>) => {
    later.then(
      (geometry) => {
        if (ticket === openTicket && get().geometry === undefined) set({ geometry });
      },
      (err: unknown) =>
        console.warn(`STUDIO_LAYOUT_FAILED: no routes for the saved layout (${describe(err)}); transitions are drawn plainly`),
    );
  };

  /**
   * A large machine opened without saved places is drawn at the quick placement; the elkjs layout replaces it when it
   * arrives, in the spec and in the undo history, unless the user moved, added or removed a state in between (their
   * edit wins). When the quick placement was saved meanwhile, the replaced layout is an unsaved change. Dropped when
   * another machine was opened since; a failed layout leaves the quick placement with a coded notice.
   */
  const replaceInBackground = (ticket: number, id: string, placed: OpenPlacement, version: string | null) => {
    const quick = placed.quick!;
    const start = performance.now();
    const outcome = (result: 'replaced' | 'kept' | 'failed') =>
      performance.measure('flowing:placement', { start, detail: { machine: id, outcome: result } });
    placed.later!.then(
      (geometry) => {
        if (ticket !== openTicket) return;
        const { spec, past, future, baseVersion, dirty } = get();
        const next = spec && replaceQuick(spec, quick, geometry.layout);
        if (!next) {
          outcome('kept');
          return;
        }
        const swap = (entry: HistoryEntry): HistoryEntry => {
          const swapped = replaceQuick(entry.spec, quick, geometry.layout);
          return swapped ? { ...entry, spec: swapped } : entry;
        };
        set({
          spec: next,
          geometry,
          past: past.map(swap),
          future: future.map(swap),
          dirty: dirty || baseVersion !== version,
          fitRequest: get().fitRequest + 1,
        });
        outcome('replaced');
      },
      (err: unknown) => {
        if (ticket !== openTicket) return;
        outcome('failed');
        set({
          notice: {
            kind: 'error',
            message: `Auto-layout failed (${layoutFailure(err)}); the states stay at a quick placement. Try Auto-layout again.`,
          },
        });
      },
    );
  };

  return {
    machines: [],
    tools: [],
    toolInfos: {},
    machineId: undefined,
    spec: undefined,
    baseVersion: null,
    dirty: false,
    past: [],
    future: [],
    selection: null,
    problems: [],
    codegenProblems: [],
    generated: undefined,
    showGenerated: false,
    notice: null,
    busy: undefined,
    centerRequest: 0,
    fitRequest: 0,
    geometry: undefined,
    showShortcuts: false,
    lastCoalesce: undefined,

    async init() {
      try {
        const [machines] = await Promise.all([api.listMachines(), get().refreshTools()]);
        set({ machines });
      } catch (err) {
        set({ notice: { kind: 'error', message: `Could not list machines: ${describe(err)}` } });
      }
    },

    async refreshTools() {
      try {
        const tools = await api.listTools();
        const toolInfos = toToolInfos(tools);
        set({ tools, toolInfos });
        const spec = get().spec;
        if (spec) set({ problems: validate(spec) });
      } catch (err) {
        set({ notice: { kind: 'error', message: `Could not list tools: ${describe(err)}` } });
      }
    },

    async openMachine(id) {
      const ticket = ++openTicket;
      performance.mark('flowing:open:start');
      // The page says "ready" again only once this machine is drawn (tests and the perf figures wait on it).
      delete document.body.dataset.canvasReady;
      set({ busy: 'loading', notice: null });
      if (window.location.hash !== `#${id}`) history.replaceState(null, '', `#${id}`);
      try {
        const doc = await api.getMachine(id);
        if (ticket !== openTicket) return;
        if (!doc.spec || typeof doc.spec !== 'object') {
          set({
            busy: undefined,
            notice: {
              kind: 'error',
              message: `${doc.file} is not valid JSON: ${doc.problems[0]?.message ?? ''}. Fix it in an editor, then reload.`,
            },
          });
          return;
        }
        // Saved places are kept; a machine without any is drawn at once when large (the elkjs layout follows).
        const placed = await placeForOpen(doc.spec);
        if (ticket !== openTicket) return;
        set({
          machineId: id,
          spec: placed.spec,
          baseVersion: doc.version,
          dirty: false,
          past: [],
          future: [],
          selection: null,
          problems: [],
          codegenProblems: [],
          generated: undefined,
          showGenerated: false,
          busy: undefined,
          fitRequest: get().fitRequest + 1,
          geometry: placed.geometry,
          ...(placed.failure
            ? {
                notice: {
                  kind: 'error',
                  message: `Auto-layout failed (${layoutFailure(placed.failure)}); states without a saved place are placed in rows, transitions drawn plainly.`,
                },
              }
            : {}),
        });
        validateOnDraw = true;
        validateSoon(OPEN_VALIDATE_MS);
        if (placed.quick) replaceInBackground(ticket, id, placed, doc.version);
        else if (placed.later) routeInBackground(ticket, placed.later);
      } catch (err) {
        if (ticket === openTicket) set({ busy: undefined, notice: { kind: 'error', message: `Could not open ${id}: ${describe(err)}` } });
      }
    },

    drawn() {
      if (!validateOnDraw) return;
      validateOnDraw = false;
      validateSoon(0);
    },

    async reload() {
      const id = get().machineId;
      if (id) await get().openMachine(id);
    },

    apply(edit, options = {}) {
      const { spec, selection, past, lastCoalesce } = get();
      if (!spec) return false;
      const result = edit(spec);
      const next = 'ok' in result && typeof result.ok === 'boolean' ? result : { ok: true as const, spec: result as FlowSpec };
      if (!next.ok) {
        set({ notice: { kind: 'error', message: `${next.message} (${next.code})` } });
        return false;
      }
      if (next.spec === spec) return true;
      if (performance.getEntriesByName('flowing:edit:start', 'mark').length === 0) performance.mark('flowing:edit:start');
      const now = Date.now();
      const merge = options.coalesce !== undefined && lastCoalesce?.key === options.coalesce && now - lastCoalesce.at < COALESCE_MS;
      set({
        spec: next.spec,
        past: merge ? past : [...past.slice(-HISTORY_LIMIT + 1), { spec, selection }],
        future: [],
        dirty: true,
        codegenProblems: [],
        selection: options.select !== undefined ? options.select : selection,
        lastCoalesce: options.coalesce !== undefined ? { key: options.coalesce, at: now } : undefined,
        notice: get().notice?.kind === 'error' ? null : get().notice,
      });
      // Typing (a coalesced edit) validates once the keystrokes pause, any other edit right after its frame.
      validateSoon(options.coalesce !== undefined ? VALIDATE_PAUSE_MS : undefined);
      return true;
    },

    undo() {
      const { past, future, spec, selection } = get();
      const previous = past[past.length - 1];
      if (!previous || !spec) return;
      set({
        spec: previous.spec,
        selection: previous.selection,
        past: past.slice(0, -1),
        future: [...future, { spec, selection }],
        dirty: true,
        problems: validate(previous.spec),
        codegenProblems: [],
        lastCoalesce: undefined,
      });
    },

    redo() {
      const { past, future, spec, selection } = get();
      const next = future[future.length - 1];
      if (!next || !spec) return;
      set({
        spec: next.spec,
        selection: next.selection,
        future: future.slice(0, -1),
        past: [...past, { spec, selection }],
        dirty: true,
        problems: validate(next.spec),
        codegenProblems: [],
        lastCoalesce: undefined,
      });
    },

    select(selection, center = false) {
      set({ selection, centerRequest: center ? get().centerRequest + 1 : get().centerRequest, lastCoalesce: undefined });
    },

    async autoLayout() {
      const spec = get().spec;
      if (!spec) return;
      set({ busy: 'layout' });
      try {
        const geometry = await layoutMachine(spec);
        get().apply((s) => ({ ...s, layout: geometry.layout }));
        set({ fitRequest: get().fitRequest + 1, geometry });
      } catch (err) {
        set({ notice: { kind: 'error', message: `Auto-layout failed: ${describe(err)}` } });
      } finally {
        set({ busy: undefined });
      }
    },

    async save(draft = false) {
      const { spec, machineId, baseVersion } = get();
      if (!spec || !machineId) return false;
      set({ busy: 'saving' });
      try {
        const result = await api.saveMachine(machineId, spec, baseVersion, draft);
        set({
          baseVersion: result.version,
          dirty: false,
          busy: undefined,
          // The picker shows each machine's validity: the saved file's problems replace the listed ones at once.
          machines: get().machines.map((m) => (m.id === machineId ? { ...m, version: result.version, problems: result.problems } : m)),
          // Saved, but sessions of the connected runtime wait in states the edit removed: said before anything else.
          notice: result.warning
            ? { kind: 'stranding', message: `Saved. ${result.warning}.` }
            : {
                kind: 'info',
                message: draft ? 'Saved as a draft (the spec has errors; Generate stays disabled until they are fixed).' : 'Saved.',
              },
        });
        return true;
      } catch (err) {
        if (hasCode(err, 'STUDIO_CONFLICT')) {
          set({
            busy: undefined,
            notice: {
              kind: 'conflict',
              message:
                'The spec file changed on disk since you opened it. Reload it (your unsaved edits are dropped) or copy your changes first.',
            },
          });
        } else if (hasCode(err, 'STUDIO_SPEC_INVALID')) {
          const problems = (err.details.problems as SpecProblem[] | undefined) ?? [];
          set({
            busy: undefined,
            notice: {
              kind: 'invalid',
              message: `The spec has ${problems.filter((p) => p.severity === 'error').length || 'some'} error(s); fix them, or save it as a draft.`,
            },
          });
        } else {
          set({ busy: undefined, notice: { kind: 'error', message: `Save failed: ${describe(err)}` } });
        }
        return false;
      }
    },

    async generate() {
      performance.mark('flowing:generate:start');
      const { machineId: id, spec, dirty, baseVersion } = get();
      if (!id || !spec) return;
      set({ busy: 'generating' });
      try {
        // An edited spec goes with the request: the server saves it only together with code that type-checks, so a
        // Generate never leaves a saved spec whose generated code is missing or stale.
        const result = await api.generate(id, dirty ? { spec, baseVersion } : undefined);
        const errors = result.problems.filter((p) => p.severity === 'error');
        const saved = result.version !== undefined;
        set({
          generated: result,
          showGenerated: true,
          codegenProblems: result.problems,
          busy: undefined,
          ...(saved
            ? {
                baseVersion: result.version,
                dirty: get().spec !== spec,
                machines: get().machines.map((m) =>
                  m.id === id ? { ...m, version: result.version!, problems: result.problems.filter((p) => p.code.startsWith('SPEC_')) } : m,
                ),
              }
            : {}),
          notice:
            errors.length > 0
              ? {
                  kind: 'error',
                  message: `Generate refused: ${errors.length} type error(s), marked on the graph. Nothing was written${dirty ? ' (your edits are not saved yet)' : ''}; fix them and generate again.`,
                }
              : result.warning
                ? { kind: 'stranding', message: `Saved the spec and generated ${result.files.length} file(s). ${result.warning}.` }
                : { kind: 'info', message: `${saved ? 'Saved the spec and generated' : 'Generated'} ${result.files.length} file(s).` },
        });
      } catch (err) {
        if (hasCode(err, 'STUDIO_SPEC_INVALID')) {
          set({
            busy: undefined,
            notice: {
              kind: 'error',
              message: 'Generate refused: the spec has errors. Fix the problems listed below, then generate.',
            },
          });
        } else if (hasCode(err, 'STUDIO_CONFLICT')) {
          set({
            busy: undefined,
            notice: {
              kind: 'conflict',
              message:
                'The spec file changed on disk since you opened it. Reload it (your unsaved edits are dropped) or copy your changes first.',
            },
          });
        } else set({ busy: undefined, notice: { kind: 'error', message: `Generate failed: ${describe(err)}` } });
      }
    },

    async createTool(name) {
      try {
        const { path } = await api.createTool(name);
        await get().refreshTools();
        set({ notice: { kind: 'info', message: `Created ${path}: fill in its input, output and run().` } });
        return true;
      } catch (err) {
        set({ notice: { kind: 'error', message: `Could not create the tool: ${describe(err)}` } });
        return false;
      }
    },

    setNotice(notice) {
      set({ notice });
    },
    closeGenerated() {
      set({ showGenerated: false });
    },
    toggleShortcuts(show) {
      set({ showShortcuts: show ?? !get().showShortcuts });
    },
  };
});
