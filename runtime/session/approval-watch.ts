import type { AnyMachineSnapshot } from 'xstate';
import type { ApprovalRecord } from '../store/types.ts';
import { activeNodes } from '../xstate-adapter.ts';
import { approvalRequest, decideApproval, decided } from './approvals.ts';
import type { MachineInfo } from './machine-info.ts';

/**
 * The approval of one session: asked for when the session enters a state whose APPROVE leads to a high-risk tool,
 * decided by the APPROVE or REJECT applied in that state, consumed when the approved call runs (once).
 */
export class ApprovalWatch {
  /** The session's approval: requested, decided or consumed. */
  current?: ApprovalRecord;
  /** The approval state the session is in now, if any (a new request is made only on entering one). */
  private inState?: string;

  constructor(
    private readonly info: MachineInfo,
    private readonly sessionId: string,
    stored?: ApprovalRecord,
  ) {
    if (stored) this.current = stored;
  }

  /** A stored session was restored: an undecided approval still waits in its state. */
  restored(): void {
    this.inState = this.current && !this.current.decision ? this.current.state : undefined;
  }

  /** After a step: the new request when the session just entered an approval state, else undefined. */
  entered(snapshot: AnyMachineSnapshot, step: number): ApprovalRecord | undefined {
    let site: string | undefined;
    for (const node of activeNodes(snapshot)) if (this.info.approvalSites.has(node.key)) site = node.key;
    const entering = site !== undefined && site !== this.inState;
    this.inState = site;
    if (!entering) return undefined;
    this.current = approvalRequest(this.info.approvalSites.get(site!)!, snapshot.context, `${this.sessionId}:${site}@${step}`);
    return this.current;
  }

  /** The decided approval when `event` is APPROVE / REJECT for the pending request in its state, else undefined. */
  decide(event: { type: string; reason?: unknown }, snapshot: AnyMachineSnapshot): ApprovalRecord | undefined {
    const decided = decideApproval(this.current, event, snapshot);
    if (decided) this.current = decided;
    return decided;
  }

  /**
   * The decided approval when `event` is APPROVE / REJECT and the session waits for a call an agent's model proposed;
   * undefined otherwise (an approval state's decision goes through its transition).
   */
  proposalFor(event: unknown): ApprovalRecord | undefined {
    const given = event as { type?: unknown; reason?: unknown } | null | undefined;
    const type = given?.type;
    const current = this.current;
    if (!current?.callId || current.decision || (type !== 'APPROVE' && type !== 'REJECT')) return undefined;
    return decided(current, { type, reason: given?.reason });
  }

  /** The approved call ran: one approval pays out once. */
  consume(): void {
    if (this.current) this.current = { ...this.current, consumed: true };
  }
}
