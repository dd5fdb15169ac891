import { formatAmount, type Cost, type CostRow, type MachineCost } from '@flowing/spec';
import { useEffect } from 'react';
import { useEditor } from '../store/editor-store.ts';
import { useCost, scheduleCost } from '../store/cost-store.ts';
import './cost.css';

function amounts(cost: Cost): string {
  const tokens = Number.isFinite(cost.tokens) ? `, ${cost.tokens} tokens` : '';
  return `${formatAmount(cost.modelCalls)} model · ${formatAmount(cost.toolCalls)} tool calls${tokens}`;
}

/** Keeps the bound of the open machine up to date; renders nothing. */
export function CostWatcher() {
  const spec = useEditor((s) => s.spec);
  const tools = useEditor((s) => s.toolInfos);
  useEffect(() => scheduleCost(spec, tools), [spec, tools]);
  return null;
}

/** The machine's bound in the toolbar: the most a turn can cost; opens the cost panel. */
export function CostButton() {
  const cost = useCost((s) => s.cost);
  const failure = useCost((s) => s.failure);
  const machineId = useEditor((s) => s.machineId);
  return (
    <>
      <CostWatcher />
      {cost && machineId && <CostSummary cost={cost} />}
      {!cost && failure && machineId && (
        <span className="cost-button cost-button--failed" data-testid="cost-failed" title={failure}>
          cost bound unavailable
        </span>
      )}
    </>
  );
}

function CostSummary({ cost }: { cost: MachineCost }) {
  const toggle = useCost((s) => s.toggle);
  const max = cost.perTurn ? cost.maximum.turn : cost.maximum.session;
  const unbounded = !Number.isFinite(max.modelCalls) || !Number.isFinite(max.toolCalls);
  return (
    <>
      <button
        type="button"
        className={unbounded ? 'cost-button cost-button--unbounded' : 'cost-button'}
        data-testid="cost-button"
        title={`At most, from the spec alone: ${amounts(max)} ${cost.perTurn ? 'per turn' : 'per run'}. Click for every turn and path.`}
        onClick={() => toggle()}
      >
        ≤ {formatAmount(max.modelCalls)} model · {formatAmount(max.toolCalls)} tool{cost.perTurn ? ' / turn' : ''}
      </button>
      <CostPanel />
    </>
  );
}

function Rows({ rows, label }: { rows: CostRow[]; label: (row: CostRow) => string }) {
  return (
    <>
      {rows.map((row) => (
        <tr key={`${label(row)}→${row.to}`}>
          <td className="num">{formatAmount(row.cost.modelCalls)}</td>
          <td className="num">{formatAmount(row.cost.toolCalls)}</td>
          <td className="num">{formatAmount(row.cost.tokens)}</td>
          <td className="cost-panel__path" title={row.states.join(' → ')}>
            {label(row)} → {row.to}
          </td>
        </tr>
      ))}
    </>
  );
}

/** Every turn and every path to a final state with its bound, and the loops and machines nothing bounds. */
export function CostPanel() {
  const cost = useCost((s) => s.cost);
  const open = useCost((s) => s.open);
  const toggle = useCost((s) => s.toggle);
  if (!cost || !open) return null;
  return (
    <section className="cost-panel" aria-label="cost bound" data-testid="cost-panel">
      <header>
        <h2>Cost bound</h2>
        <button type="button" className="icon" aria-label="close the cost panel" onClick={() => toggle(false)}>
          ✕
        </button>
      </header>
      <p className="muted">
        {cost.perTurn
          ? 'The machine waits for events, so a chat loop is counted per turn: from the start or an event to the next waiting or final state. A path to a final state counts each turn once.'
          : 'Every path from the start to a final state.'}{' '}
        Tokens are unbounded where a model call declares no maxTokens.
      </p>
      <table>
        <thead>
          <tr>
            <th>model</th>
            <th>tool</th>
            <th>tokens</th>
            <th>{cost.perTurn ? 'turn' : 'path'}</th>
          </tr>
        </thead>
        <tbody data-testid="cost-turns">
          <Rows rows={cost.turns} label={(row) => (row.event === undefined ? '(start)' : `${row.from} ${row.event}`)} />
        </tbody>
        {cost.perTurn && (
          <tbody data-testid="cost-paths">
            <tr>
              <th colSpan={4}>
                {cost.approximate ? 'paths to a final state (too many: every turn counted once)' : 'paths to a final state'}
              </th>
            </tr>
            <Rows rows={cost.paths} label={() => '(start)'} />
          </tbody>
        )}
      </table>
      <p data-testid="cost-maximum">
        Maximum: {amounts(cost.maximum.turn)} per turn; {amounts(cost.maximum.session)} per path.
      </p>
      {cost.problems.length > 0 && (
        <ul className="cost-panel__problems">
          {cost.problems.map((problem) => (
            <li key={`${problem.code}${problem.path}`} data-code={problem.code}>
              <strong>{problem.code}</strong> {problem.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The bound of one invoke block: what the call may cost at most. */
export function InvokeCost({ stateName }: { stateName: string }) {
  const call = useCost((s) => s.cost?.calls[stateName]);
  if (!call) return null;
  const parts = [
    call.cost.modelCalls !== 0 ? `${formatAmount(call.cost.modelCalls)} model` : '',
    call.cost.toolCalls !== 0 ? `${formatAmount(call.cost.toolCalls)} tool` : '',
  ].filter(Boolean);
  return (
    <span className="contract contract--cost" data-cost="bound" data-testid={`cost-${stateName}`} title={`At most: ${call.note}`}>
      ≤ {parts.join(' · ') || '0 calls'}
    </span>
  );
}
