import { api, type DeletedMachine } from '../api.ts';
import { useEditor, type EditorState } from '../store/editor-store.ts';

/** The editor as it is with no machine open. */
const nothingOpen = (): Partial<EditorState> => ({
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
  geometry: undefined,
});

async function refreshMachineList(): Promise<void> {
  useEditor.setState({ machines: await api.listMachines() });
}

/** After "New machine": the list shows the machine and the editor opens it. */
export async function openCreatedMachine(id: string): Promise<void> {
  await refreshMachineList();
  await useEditor.getState().openMachine(id);
}

/** After "Delete machine": the editor is empty, the list no longer has it, and a notice says what was removed and kept. */
export async function closeDeletedMachine(result: DeletedMachine): Promise<void> {
  history.replaceState(null, '', window.location.pathname);
  const kept = result.kept.length > 0 ? ` Kept (hand-written): ${result.kept.join(', ')}.` : '';
  useEditor.setState({
    ...nothingOpen(),
    notice: { kind: 'info', message: `Deleted machine ${result.id}: removed ${result.removed.join(', ')}.${kept}` },
  });
  await refreshMachineList();
}
