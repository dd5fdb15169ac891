import { createMemoryStore, type MemoryStore, type MemoryStoreData } from '@flowing/runtime';

/**
 * A memory store that keeps a copy of its whole content after every commit: dump k is exactly what a process
 * killed right after its k-th write would leave behind.
 */
export function createRecordingStore(): { store: MemoryStore; dumps: MemoryStoreData[] } {
  const inner = createMemoryStore();
  const dumps: MemoryStoreData[] = [];
  const store: MemoryStore = {
    ...inner,
    async commit(request) {
      await inner.commit(request);
      dumps.push(inner.exportData());
    },
  };
  return { store, dumps };
}
