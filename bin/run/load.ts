import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FlowingError, type AnyMachineDefinition } from '@flowing/runtime';
import { routeOf, type ChannelRoute } from '@flowing/spec';
import { nearestNames } from './nearest.ts';

const MACHINE_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `machines/` folders searched, in order: the working directory's, then this package's examples. */
function machineRoots(): string[] {
  return [...new Set([process.cwd(), PACKAGE_ROOT].map((root) => resolve(root, 'machines')))];
}

/** Ids of the machines found: those with generated code, and those with only a spec. */
export function listMachines(): { generated: Set<string>; specOnly: Set<string> } {
  const generated = new Set<string>();
  const specs = new Set<string>();
  for (const root of machineRoots()) {
    let entries: string[];
    try {
      entries = readdirSync(root);
    } catch {
      continue;
    }
    for (const id of entries) {
      if (existsSync(resolve(root, id, `${id}.machine.ts`))) generated.add(id);
      else if (existsSync(resolve(root, id, `${id}.flow.json`))) specs.add(id);
    }
  }
  for (const id of generated) specs.delete(id);
  return { generated, specOnly: specs };
}

/** Finds `machines/<id>/<id>.machine.ts` (in the working directory, then in this package) and its exported definition. */
export async function loadMachine(machineId: string): Promise<AnyMachineDefinition> {
  if (!MACHINE_ID.test(machineId))
    throw new FlowingError(
      'UNKNOWN_MACHINE',
      `'${machineId}' is not a machine id (kebab-case, e.g. order-support)${suggestion(machineId)}`,
    );
  const file = machineRoots()
    .map((root) => resolve(root, machineId, `${machineId}.machine.ts`))
    .find((path) => existsSync(path));
  if (!file) {
    const { specOnly } = listMachines();
    if (specOnly.has(machineId)) {
      throw new FlowingError(
        'UNKNOWN_MACHINE',
        `machine '${machineId}' has a spec (machines/${machineId}/${machineId}.flow.json) but no generated code; run \`flowing codegen\` first`,
      );
    }
    throw new FlowingError('UNKNOWN_MACHINE', `no machine '${machineId}' (looked for machines/${machineId}/)${suggestion(machineId)}`);
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const found = Object.values(module).find(
    (value): value is AnyMachineDefinition =>
      !!value && typeof value === 'object' && (value as AnyMachineDefinition).id === machineId && 'machine' in value && 'specHash' in value,
  );
  if (!found) throw new FlowingError('UNKNOWN_MACHINE', `${file} exports no MachineDefinition with id '${machineId}'`);
  return found;
}

/** "; did you mean ...?" with the nearest known ids, or the list of known ids when none is near. */
function suggestion(machineId: string): string {
  const { generated, specOnly } = listMachines();
  const known = [...generated, ...specOnly].sort();
  if (known.length === 0) return '; there is no machines/ folder with a machine here';
  const near = nearestNames(machineId.toLowerCase(), known);
  if (near.length > 0) return `; did you mean ${near.map((id) => `'${id}'`).join(' or ')}?`;
  return `; known machines: ${known.join(', ')}`;
}

/** The spec file of a machine id, parsed as plain JSON (undefined when there is none or it does not parse). */
function readSpecJson(machineId: string): Record<string, unknown> | undefined {
  for (const root of machineRoots()) {
    try {
      return JSON.parse(readFileSync(resolve(root, machineId, `${machineId}.flow.json`), 'utf8')) as Record<string, unknown>;
    } catch {}
  }
  return undefined;
}

/** The channels a spec publishes on (every `emit` of its transitions and entry/exit blocks). */
function emittedChannels(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) emittedChannels(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'emit' && Array.isArray(value)) {
        for (const message of value) if (typeof message?.channel === 'string') into.add(message.channel);
      } else emittedChannels(value, into);
    }
  }
  return into;
}

/**
 * A machine and every machine a session of it can reach: those it invokes as child sessions (transitively) and those
 * that receive the channels any of them publishes on. The first is `machineId`'s.
 */
export async function loadMachineTree(machineId: string): Promise<AnyMachineDefinition[]> {
  const loaded = new Map<string, AnyMachineDefinition>();
  const emitted = new Set<string>();
  const visit = async (id: string): Promise<void> => {
    if (loaded.has(id)) return;
    const definition = await loadMachine(id);
    loaded.set(id, definition);
    emittedChannels(readSpecJson(id), emitted);
    const actors = Object.keys((definition.machine as { implementations?: { actors?: object } }).implementations?.actors ?? {});
    for (const actor of actors) if (actor.startsWith('machine.')) await visit(actor.slice('machine.'.length));
  };
  await visit(machineId);
  if (emitted.size > 0) {
    const routes: ChannelRoute[] = [];
    for (const id of listMachines().generated) {
      const channels = readSpecJson(id)?.channels as { listen?: string[]; key?: string } | undefined;
      for (const pattern of channels?.listen ?? []) routes.push({ pattern, machine: id, key: channels?.key ?? '' });
    }
    for (const channel of emitted) {
      const route = routeOf(routes, channel);
      if (route) await visit(route.machine);
    }
  }
  return [...loaded.values()];
}
