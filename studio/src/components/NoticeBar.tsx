import { useEditor } from '../store/editor-store.ts';

/** The message line: results of Save/Generate, a conflict with Reload, invalid spec with Save as draft. */
export function NoticeBar() {
  const notice = useEditor((s) => s.notice);
  const reload = useEditor((s) => s.reload);
  const save = useEditor((s) => s.save);
  const setNotice = useEditor((s) => s.setNotice);
  if (!notice) return null;
  return (
    <div
      className={`notice notice--${notice.kind}`}
      role={notice.kind === 'info' ? 'status' : 'alert'}
      data-testid="notice"
      data-kind={notice.kind}
    >
      <span>{notice.message}</span>
      {notice.kind === 'conflict' && (
        <button type="button" data-testid="notice-reload" onClick={() => void reload()}>
          Reload from disk
        </button>
      )}
      {notice.kind === 'invalid' && (
        <button type="button" data-testid="notice-save-draft" onClick={() => void save(true)}>
          Save as draft
        </button>
      )}
      <button type="button" className="icon" aria-label="dismiss" onClick={() => setNotice(null)}>
        ✕
      </button>
    </div>
  );
}
