import {
  SESSION_FILE_FORMAT_VERSION,
  SESSION_FILE_KIND,
  type JournalEntry as FileJournalEntry,
  type SessionFileHeader,
} from '@flowing/protocol';
import type { JournalEntry, SessionStore } from '../store/types.ts';
import { eventPages, loadRecord } from './read-log.ts';

/** An exported session: the JSON-lines text, its header and a file name to save it under. */
export interface SessionExport {
  header: SessionFileHeader;
  text: string;
  /** `<machine>-<session>.flowing.jsonl` (both ids are plain: letters, digits, `_` and `-`). */
  fileName: string;
}

/** An export as it is written: the header and file name first, then the file's text a piece at a time. */
export interface SessionExportStream {
  header: SessionFileHeader;
  fileName: string;
  /** The file's text in pieces (each a whole number of lines); the log is read from the store as they are taken. */
  chunks: AsyncIterable<string>;
}

/**
 * Writes a stored session as one JSON-lines file, a piece at a time: a header line (kind, format version, machine,
 * spec hash, session, export time, counts), one line per event in seq order, then one `{ "journal": entry }` line per
 * journal entry. The log is read one page per piece, when the piece is asked for, so a consumer that writes each
 * piece before taking the next (a response with backpressure) holds one page at a time, however long the log.
 * @example
 * const file = await exportSessionStream(store, sessionId);
 * for await (const chunk of file.chunks) out.write(chunk);
 */
export async function exportSessionStream(
  store: SessionStore,
  sessionId: string,
  options: { now?: number } = {},
): Promise<SessionExportStream> {
  const record = await loadRecord(store, sessionId);
  const journal: readonly JournalEntry[] = await store.readJournal(sessionId);
  // Seqs run 1..seq without gaps: the record's seq is the number of events.
  const header: SessionFileHeader = {
    kind: SESSION_FILE_KIND,
    formatVersion: SESSION_FILE_FORMAT_VERSION,
    machineId: record.machineId,
    specHash: record.specHash,
    sessionId,
    exportedAt: options.now ?? Date.now(),
    events: record.seq,
    journal: journal.length,
  };
  async function* chunks(): AsyncGenerator<string> {
    yield `${JSON.stringify(header)}\n`;
    for await (const page of eventPages(store, sessionId, { upTo: record.seq })) {
      let text = '';
      for (const event of page) text += `${JSON.stringify(event)}\n`;
      yield text;
    }
    // The store's journal entry is the one the file format declares (the compiler holds the two together here).
    let text = '';
    for (const entry of journal) text += `${JSON.stringify({ journal: entry satisfies FileJournalEntry })}\n`;
    if (text !== '') yield text;
  }
  return { header, fileName: `${safeName(record.machineId)}-${safeName(sessionId)}.flowing.jsonl`, chunks: chunks() };
}

/**
 * The whole export as one string (see `exportSessionStream` for a long log).
 * @example
 * const file = await exportSessionFile(store, sessionId);
 * await writeFile(file.fileName, file.text);
 */
export async function exportSessionFile(store: SessionStore, sessionId: string, options: { now?: number } = {}): Promise<SessionExport> {
  const { header, fileName, chunks } = await exportSessionStream(store, sessionId, options);
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return { header, text, fileName };
}

/** The JSON-lines text of `exportSessionFile`. */
export async function exportSession(store: SessionStore, sessionId: string, options: { now?: number } = {}): Promise<string> {
  return (await exportSessionFile(store, sessionId, options)).text;
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);
}
