import type { FlowSpec } from '@flowing/spec';
import { useEditor } from '../../store/editor-store.ts';
import { useInspect } from '../inspect-store.ts';
import { browserSpecHash } from './spec-hash.ts';

/** The spec a machine's graph is drawn from in the Inspect view, and its hash. */
export interface GraphSpec {
  spec: FlowSpec;
  specHash: string;
  /** `runtime`: the spec the runtime serves (its code was generated from it); `editor`: the one open in the editor. */
  from: 'runtime' | 'editor';
}

/**
 * The spec the Inspect view draws for `machineId`, as the live view chooses it: the runtime's (with the hash its
 * generated code carries) when the runtime serves the machine, else the editor's when it is the open machine (hashed
 * here as codegen would). Undefined when neither has the machine (offline, another machine open).
 */
export async function graphSpecFor(machineId: string): Promise<GraphSpec | undefined> {
  const served = useInspect.getState().runtimeMachines?.find((m) => m.id === machineId);
  if (served && served.spec && typeof served.spec === 'object')
    return { spec: served.spec as FlowSpec, specHash: served.specHash, from: 'runtime' };
  const editor = useEditor.getState();
  if (editor.machineId === machineId && editor.spec)
    return { spec: editor.spec, specHash: await browserSpecHash(editor.spec), from: 'editor' };
  return undefined;
}
