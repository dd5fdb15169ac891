import {
  SESSION_FILE_FORMAT_VERSION,
  SESSION_FILE_KIND,
  type JournalEntry as FileJournalEntry,
  type SessionFileHeader,
} from '@flowing/protocol';
import type { JournalEntry, SessionStore } from '../store/types.ts';
import { readSessionLog } from './read-log.ts';

/** An exported session: the JSON-lines text, its header and a file name to save it under. */
export interface SessionExport {
  header: SessionFileHeader;
  text: string;
  /** `<machine>-<session>.flowing.jsonl` (both ids are plain: letters, digits, `_` and `-`). */
  fileName: string;
}

/**
 * Writes a stored session as one JSON-lines file: a header line (kind, format version, machine, spec hash, session,
 * export time, counts), one line per event in seq order, then one `{ "journal": entry }` line per journal entry.
 * Read it back with `parseSessionFile`.
 * @example
 * const file = await exportSessionFile(store, sessionId);
 * await writeFile(file.fileName, file.text);
 */
export async function exportSessionFile(store: SessionStore, sessionId: string, options: { now?: number } = {}): Promise<SessionExport> {
  const { record, events } = await readSessionLog(store, sessionId);
  const journal: readonly JournalEntry[] = await store.readJournal(sessionId);
  const header: SessionFileHeader = {
    kind: SESSION_FILE_KIND,
    formatVersion: SESSION_FILE_FORMAT_VERSION,
    machineId: record.machineId,
    specHash: record.specHash,
    sessionId,
    exportedAt: options.now ?? Date.now(),
    events: events.length,
    journal: journal.length,
  };
  const lines = [JSON.stringify(header)];
  for (const event of events) lines.push(JSON.stringify(event));
  // The store's journal entry is the one the file format declares (the compiler holds the two together here).
  for (const entry of journal) lines.push(JSON.stringify({ journal: entry satisfies FileJournalEntry }));
  return { header, text: `${lines.join('\n')}\n`, fileName: `${safeName(record.machineId)}-${safeName(sessionId)}.flowing.jsonl` };
}

/** The JSON-lines text of `exportSessionFile`. */
export async function exportSession(store: SessionStore, sessionId: string, options: { now?: number } = {}): Promise<string> {
  return (await exportSessionFile(store, sessionId, options)).text;
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);
}
