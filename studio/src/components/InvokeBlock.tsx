import { Handle, Position } from '@xyflow/react';
import { handoffTargets, memoryLine, type Point } from '../graph/index.ts';
import { useEditor } from '../store/editor-store.ts';
import { InvokeCost } from './CostPanel.tsx';

interface InvokeFacts {
  tool?: string;
  llm?: string;
  machine?: string;
  model?: string;
  input?: Record<string, string> | string;
  retries?: number;
  timeoutMs?: number;
  idempotencyKey?: string;
  /** agent: the machines it may hand off to (read loosely: a spec may predate the field). */
  handoffs?: unknown;
  /** Model calls: the conversation read and what of it is kept (drawn by graph/memory-line.ts). */
  history?: unknown;
  memory?: unknown;
}

/** One contract badge: short text on the canvas, the full sentence on hover. */
interface Badge {
  key: string;
  text: string;
  title: string;
  tone?: 'danger' | 'warn' | 'ok';
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The contract badges of a tool call: timeout, retries, idempotency, risk, and the approval a high-risk tool needs. */
function toolBadges(
  invoke: InvokeFacts,
  tool: { idempotent: boolean; risk: 'low' | 'medium' | 'high'; timeoutMs?: number } | undefined,
): Badge[] {
  const timeout = invoke.timeoutMs ?? tool?.timeoutMs;
  const badges: Badge[] = [
    {
      key: 'timeout',
      text: timeout === undefined ? "timeout: tool's" : `timeout ${seconds(timeout)}`,
      title: timeout === undefined ? "Timeout: the tool's own timeoutMs" : `Timeout: ${timeout} ms per attempt`,
    },
    {
      key: 'retries',
      text: invoke.retries ? `${invoke.retries} ${invoke.retries === 1 ? 'retry' : 'retries'}` : 'no retry',
      title: `Retries after a failure: ${invoke.retries ?? 0}`,
    },
  ];
  if (!tool)
    return [...badges, { key: 'missing', text: 'not in tools/', title: `No tool named '${invoke.tool}' in tools/`, tone: 'danger' }];
  badges.push({
    key: 'idempotent',
    text: tool.idempotent ? 'idempotent' : 'not idempotent',
    title: tool.idempotent ? 'Idempotent: safe to retry' : 'Not idempotent: never retried without an idempotency key',
    tone: tool.idempotent ? 'ok' : 'warn',
  });
  badges.push({
    key: 'risk',
    text: `${tool.risk} risk`,
    title: `Risk: ${tool.risk}`,
    tone: tool.risk === 'high' ? 'danger' : tool.risk === 'medium' ? 'warn' : 'ok',
  });
  if (tool.risk === 'high')
    badges.push({
      key: 'approval',
      text: 'needs approval',
      title: 'High risk: the session waits for a person to approve the call before it runs',
      tone: 'danger',
    });
  return badges;
}

function modelBadges(invoke: InvokeFacts): Badge[] {
  const badges: Badge[] = [];
  if (invoke.timeoutMs !== undefined)
    badges.push({ key: 'timeout', text: `timeout ${seconds(invoke.timeoutMs)}`, title: `Timeout: ${invoke.timeoutMs} ms` });
  badges.push({
    key: 'model',
    text: invoke.model ?? 'default model',
    title: invoke.model ? `Model: ${invoke.model}` : "The machine's default model for this kind",
  });
  return badges;
}

/** The badges of a machine call: the child session it starts, whether the machine exists, its timeout. */
function machineBadges(invoke: InvokeFacts, known: boolean): Badge[] {
  const badges: Badge[] = [
    { key: 'child', text: 'child session', title: 'Starts a child session of this machine; the state waits for its output' },
  ];
  if (invoke.timeoutMs !== undefined)
    badges.push({ key: 'timeout', text: `timeout ${seconds(invoke.timeoutMs)}`, title: `Timeout: ${invoke.timeoutMs} ms` });
  if (!known)
    badges.push({ key: 'missing', text: 'not in machines/', title: `No machine '${invoke.machine}' in machines/`, tone: 'danger' });
  return badges;
}

/** The tooltip of the block: what the call is given. */
function inputsText(invoke: InvokeFacts): string {
  if (typeof invoke.input === 'string') return `input: ${invoke.input}`;
  const entries = Object.entries(invoke.input ?? {});
  if (entries.length === 0) return 'no input mapped';
  return ['input:', ...entries.map(([field, expression]) => `  ${field} ← ${expression}`)].join('\n');
}

/**
 * A tool or model call drawn as a block inside its state: kind, name, contract badges, and the done and error ports
 * that the onDone and onError branches leave from (drag from a port to add a branch).
 */
export function InvokeBlock({
  invoke,
  stateName,
  width,
  ports,
}: {
  invoke: InvokeFacts;
  stateName: string;
  width: number;
  ports: { done?: Point; error?: Point } | undefined;
}) {
  const tool = useEditor((s) => (invoke.tool === undefined ? undefined : s.tools.find((t) => t.name === invoke.tool)));
  const knownMachine = useEditor((s) => invoke.machine !== undefined && s.machines.some((m) => m.id === invoke.machine));
  const openMachine = useEditor((s) => s.openMachine);
  const isTool = invoke.tool !== undefined;
  const isMachine = invoke.machine !== undefined;
  const badges = isTool
    ? toolBadges(invoke, tool as (typeof tool & { timeoutMs?: number }) | undefined)
    : isMachine
      ? machineBadges(invoke, knownMachine)
      : modelBadges(invoke);
  const kind = isTool ? 'tool' : isMachine ? 'machine' : 'model';
  const handoffs = handoffTargets(invoke);
  const memory = memoryLine(invoke);
  const done = ports?.done?.x ?? Math.round(width * 0.3);
  const error = ports?.error?.x ?? Math.round(width * 0.7);
  return (
    <div
      className={`invoke-block invoke-block--${kind}${memory ? ' invoke-block--memory' : ''}`}
      data-testid={`invoke-${stateName}`}
      title={`${isTool ? 'Tool' : isMachine ? 'Machine' : 'Model'} call ${invoke.tool ?? invoke.machine ?? invoke.llm}\n${inputsText(invoke)}`}
    >
      <div className="invoke-block__title">
        <span className="invoke-block__kind">{isTool ? '⚙ tool' : isMachine ? '▣ machine' : `✦ ${invoke.llm}`}</span>
        {isMachine ? (
          <button
            type="button"
            className="invoke-block__name invoke-block__link nodrag"
            data-testid={`open-machine-${stateName}`}
            disabled={!knownMachine}
            title={knownMachine ? `Open machine '${invoke.machine}'` : `No machine '${invoke.machine}' in machines/`}
            onClick={(e) => {
              e.stopPropagation();
              void openMachine(invoke.machine!);
            }}
          >
            {invoke.machine}
          </button>
        ) : handoffs ? (
          <span
            className="invoke-block__handoffs"
            data-testid={`handoffs-${stateName}`}
            data-targets={handoffs.join(' ')}
            title={`Hands off to ${handoffs.join(', ')}: the model's choice is output.handoff, routed by the onDone branches`}
          >
            ⇢ {handoffs.join(' · ')}
          </span>
        ) : (
          <span className="invoke-block__name">{isTool ? invoke.tool : 'model call'}</span>
        )}
      </div>
      <div className="invoke-block__badges" data-testid={`contract-${stateName}`}>
        {badges.map((b) => (
          <span key={b.key} className={`contract contract--${b.tone ?? 'plain'}`} data-badge={b.key} title={b.title}>
            {b.text}
          </span>
        ))}
        <InvokeCost stateName={stateName} />
      </div>
      {memory && (
        <div className="invoke-block__memory" data-testid={`memory-${stateName}`} title={memory.title}>
          {/* The settings stay whole; a long conversation name gives way first. */}
          <span className="invoke-block__memory-source">memory: {memory.source}</span>
          <span className="invoke-block__memory-settings">{memory.settings.map((s) => ` · ${s}`).join('')}</span>
        </div>
      )}
      <div className="invoke-block__ports">
        <span className="port-label port-label--done" style={{ left: done - 13 }}>
          done
        </span>
        <span className="port-label port-label--error" style={{ left: error - 13 }}>
          error
        </span>
      </div>
      <Handle
        id="done"
        type="source"
        position={Position.Bottom}
        className="port port--done"
        style={{ left: done - 6 }}
        title="done: drag to a state to add an onDone branch"
        data-testid={`port-${stateName}-done`}
      />
      <Handle
        id="error"
        type="source"
        position={Position.Bottom}
        className="port port--error"
        style={{ left: error - 6 }}
        title="error: drag to a state to add an onError branch"
        data-testid={`port-${stateName}-error`}
      />
    </div>
  );
}
