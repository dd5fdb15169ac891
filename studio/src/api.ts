import type { FlowSpec, SpecProblem } from '@flowing/spec';
import { jsonOf, request } from './api-error.ts';

/** A machine in the list. */
export interface MachineSummary {
  id: string;
  file: string;
  version: string;
  problems: SpecProblem[];
}
/** A machine as loaded for editing: `spec` is the parsed JSON even when invalid (null when not JSON). */
export interface MachineDocument {
  id: string;
  file: string;
  text: string;
  spec: FlowSpec | null;
  version: string;
  problems: SpecProblem[];
}
/** A JSON Schema as the server sends it (from `z.toJSONSchema`). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  items?: JsonSchema;
  [key: string]: unknown;
}
/** A tool from tools/, with its contract. */
export interface ToolSummary {
  name: string;
  description?: string;
  idempotent: boolean;
  risk: 'low' | 'medium' | 'high';
  /** Retries of the tool's definition. */
  retries?: number;
  errors: string[];
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  file: string;
}
/** One generated file, with the text that was on disk before. */
export interface GeneratedFile {
  path: string;
  text: string;
  previous: string | undefined;
  changed: boolean;
}
/** The answer to "New machine": the spec written with one initial state. */
export interface CreatedMachine {
  id: string;
  file: string;
  version: string;
  spec: FlowSpec;
}
/** The answer to "Delete machine": project paths removed, and files left in the folder (a hand-written impl.ts). */
export interface DeletedMachine {
  id: string;
  removed: string[];
  kept: string[];
}
export interface GenerateResponse {
  ok: boolean;
  files: GeneratedFile[];
  problems: SpecProblem[];
  timings: Record<string, number>;
}

/** What the studio answers to a saved case: its project path and whether it replaced a file. */
export interface SavedCase {
  file: string;
  replaced: boolean;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const { response, text } = await request('studio', 'the studio server', path, {
    method,
    headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return jsonOf<T>('studio', response.status, text);
}

const machinePath = (id: string) => `/api/machines/${encodeURIComponent(id)}`;

/** The studio API client: every call answers its JSON or throws an ApiError (api-error.ts). */
export const api = {
  listMachines: () => call<{ machines: MachineSummary[] }>('GET', '/api/machines').then((r) => r.machines),
  getMachine: (id: string) => call<MachineDocument>('GET', machinePath(id)),
  createMachine: (id: string) => call<CreatedMachine>('POST', '/api/machines', { id }),
  deleteMachine: (id: string, baseVersion: string) => call<DeletedMachine>('DELETE', machinePath(id), { baseVersion }),
  saveMachine: (id: string, spec: FlowSpec, baseVersion: string | null, draft = false) =>
    call<{ version: string; problems: SpecProblem[]; stranded: Array<{ state: string; sessions: number }>; warning?: string }>(
      'PUT',
      machinePath(id),
      { spec, baseVersion, ...(draft ? { draft: true } : {}) },
    ),
  generate: (id: string) => call<GenerateResponse>('POST', `${machinePath(id)}/generate`),
  listTools: () => call<{ tools: ToolSummary[] }>('GET', '/api/tools').then((r) => r.tools),
  createTool: (name: string) => call<{ path: string }>('POST', '/api/tools', { name }),
  /** The names of the cases a machine already has (`machines/<id>/cases/*.case.jsonl`). */
  listCases: (id: string) => call<{ cases: string[] }>('GET', `${machinePath(id)}/cases`).then((r) => r.cases),
  /**
   * Writes a recorded case into the project. An existing name is refused with 409 STUDIO_CASE_EXISTS unless
   * `replace`; a text of another machine with the runtime's CASE_* code.
   */
  saveCase: (id: string, name: string, text: string, replace = false) =>
    call<SavedCase>('PUT', `${machinePath(id)}/cases/${encodeURIComponent(name)}`, { text, ...(replace ? { replace: true } : {}) }),
};
