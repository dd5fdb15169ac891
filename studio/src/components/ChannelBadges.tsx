import type { FlowSpec } from '@flowing/spec';
import { createContext, useContext } from 'react';
import { channelNames, emitsByState } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import './compose.css';

/** The spec a read-only graph draws (Inspect mode), when it is not the one open in the editor. */
export const DrawnSpec = createContext<FlowSpec | undefined>(undefined);

/** The channels a state publishes on, as one badge in its header (every emit with its place in the tooltip). */
export function EmitBadge({ stateName, layoutKey }: { stateName: string; layoutKey: string }) {
  const drawn = useContext(DrawnSpec);
  const edited = useEditor((s) => (drawn || !s.spec ? undefined : emitsByState(s.spec).get(layoutKey)));
  const emits = drawn ? emitsByState(drawn).get(layoutKey) : edited;
  if (!emits || emits.length === 0) return null;
  const channels = channelNames(emits);
  return (
    <span
      className="channel-badge channel-badge--emit"
      data-testid={`emits-${stateName}`}
      data-channels={channels.join(' ')}
      title={['Sends on a channel:', ...emits.map((e) => `  ${e.channel} (${e.where})`)].join('\n')}
    >
      ✉ {channels.length === 1 ? channels[0] : `${channels[0]} +${channels.length - 1}`}
    </span>
  );
}

/** What the open machine listens to (its channel patterns and the context field that keys its sessions), in the toolbar. */
export function ListenBadge() {
  const channels = useEditor((s) => s.spec?.channels);
  if (!channels) return null;
  return (
    <span
      className="channel-badge channel-badge--listen"
      data-testid="machine-listens"
      data-patterns={channels.listen.join(' ')}
      data-key={channels.key}
      title={`Receives messages on ${channels.listen.join(', ')}: one session per value of context.${channels.key}, created for a new key`}
    >
      ⇣ {channels.listen.join(' · ')} <span className="channel-badge__key">by {channels.key}</span>
    </span>
  );
}
