import { readFile } from 'node:fs/promises';
import { FlowingError } from '@flowing/runtime';

/** Reads a JSON-lines file of events (blank lines skipped); a bad line is an error naming the file and line. */
export async function readEventsFile(path: string): Promise<Array<{ type: string } & Record<string, unknown>>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new FlowingError('RUN_EVENTS_UNREADABLE', `cannot read events file ${path}: ${(error as Error).message}`);
  }
  const events: Array<{ type: string } & Record<string, unknown>> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new FlowingError('RUN_EVENTS_BAD_LINE', `${path}:${i + 1}: not valid JSON (${(error as Error).message})`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      throw new FlowingError('RUN_EVENTS_BAD_LINE', `${path}:${i + 1}: an event must be an object with a string "type"`);
    }
    events.push(value as { type: string } & Record<string, unknown>);
  }
  return events;
}
