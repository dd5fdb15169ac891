import { useState } from 'react';
import { EMBEDDED_SOURCE, useInspect } from './inspect-store.ts';

/**
 * Where sessions come from: the studio's own runtime, or a remote `flowing serve` URL with its bearer token. The token
 * is kept in memory only (the store); it is never written to localStorage or the URL.
 */
export function SourcePicker() {
  const source = useInspect((s) => s.source);
  const sourceError = useInspect((s) => s.sourceError);
  const setSource = useInspect((s) => s.setSource);
  const [url, setUrl] = useState(source.kind === 'remote' ? source.baseUrl : 'http://127.0.0.1:8787');
  const [token, setToken] = useState('');
  const [editing, setEditing] = useState(false);
  return (
    <section className="inspect-source" aria-label="runtime source">
      <div className="inspect-source__line">
        <span className="inspect-source__label" data-testid="inspect-source">
          {source.kind === 'embedded' ? 'Studio runtime (.flowing/sessions.db)' : `Remote: ${source.baseUrl}`}
        </span>
        {source.kind === 'remote' && (
          <button type="button" onClick={() => setSource(EMBEDDED_SOURCE)}>
            Use the studio's runtime
          </button>
        )}
        <button type="button" onClick={() => setEditing(!editing)} data-testid="inspect-connect-remote">
          {editing ? 'Close' : 'Remote…'}
        </button>
      </div>
      {editing && (
        <form
          className="inspect-source__form"
          onSubmit={(e) => {
            e.preventDefault();
            setSource({ kind: 'remote', baseUrl: url.trim().replace(/\/+$/, ''), token: token.trim() });
            setEditing(false);
          }}
        >
          <label>
            URL{' '}
            <input
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              data-testid="inspect-remote-url"
              placeholder="http://127.0.0.1:8787"
            />
          </label>
          <label>
            Token{' '}
            <input
              type="password"
              autoComplete="off"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              data-testid="inspect-remote-token"
              placeholder="FLOWING_TOKEN (kept in memory only)"
            />
          </label>
          <button type="submit">Connect</button>
          <p className="inspect-hint">
            The server must allow this page's origin ({window.location.origin}) with <code>--cors</code>.
          </p>
        </form>
      )}
      {sourceError && (
        <p className="inspect-error" role="alert" data-testid="inspect-source-error">
          {sourceError}
        </p>
      )}
    </section>
  );
}
