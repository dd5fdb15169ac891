import type { Deadline } from './deadline.ts';
import {
  DEFAULT_LLM_TIMEOUT_MS,
  DEFAULT_MAX_AGENT_ITERATIONS,
  DEFAULT_MAX_CONCURRENT_CALLS,
  DEFAULT_MAX_LOG_BYTES,
  DEFAULT_STEPS_PER_TURN,
  DEFAULT_MACHINE_DEPTH,
  DEFAULT_MAX_TOOL_RESULT_CHARS,
  DEFAULT_RETRY_BASE_MS,
  DEFAULT_RETRY_MAX_MS,
} from './constants.ts';
import { FlowingError } from './errors.ts';
import type { LlmRequest } from './llm/types.ts';

/** Bounds of a runtime; all optional, see constants.ts for the defaults. */
export interface RuntimeLimits {
  /**
   * Steps (transitions taken) a session may make between two events from outside, for machines whose spec sets no
   * `limits.stepsPerTurn`. Beyond it the event is refused with STEP_LIMIT, the session goes back to the state it
   * was in before that event and takes the next one (a turn with no event from outside — the session's start, a
   * timer — that runs past it ends the session with STEP_LIMIT).
   */
  stepsPerTurn?: number;
  /** @deprecated the same bound as `stepsPerTurn` (it was counted over a session's lifetime before). */
  maxSteps?: number;
  /**
   * Bytes a session's log (events and journal writes, as JSON) may take. A commit that would go past it is not
   * written: the event is refused with SESSION_LOG_FULL, and so is every later one.
   */
  maxLogBytes?: number;
  /** Prompt + completion tokens a session may spend (BUDGET_EXCEEDED beyond). */
  tokenBudget?: number;
  /** Tool and model calls in flight at once, across all sessions of the runtime. */
  maxConcurrentCalls?: number;
  /**
   * What happens to work beyond `maxConcurrentCalls`. `'queue'` (the default): every send is taken, and a call that
   * finds no free slot waits for one in arrival order (latency grows, nothing is refused). `'refuse'`: at most
   * `maxConcurrentCalls` runs (a `createSession` or `send` until the session is quiet) are in progress at once; one
   * more is refused at once with RUNTIME_SATURATED and `details.retryAfterSeconds` (HTTP 429 with Retry-After),
   * before it reaches the session, so nothing is logged or stored for it.
   */
  overflow?: 'queue' | 'refuse';
  /** How deep child sessions may nest (default 8); a machine invoke beyond fails with MACHINE_DEPTH_EXCEEDED. */
  machineDepth?: number;
  /** Upper bound on agent iterations, whatever the spec asks. */
  maxAgentIterations?: number;
  /** Tool results longer than this (JSON characters) are cut before a model sees them. */
  maxToolResultChars?: number;
  llmTimeoutMs?: number;
  /** First retry delay; doubles per attempt, with jitter, capped at `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Model for calls whose request names none; `models[kind]` first. */
  model?: string;
  models?: Partial<Record<LlmRequest['kind'] | 'default', string>>;
}

export type ResolvedLimits = Required<Omit<RuntimeLimits, 'model' | 'models' | 'maxSteps'>> & Pick<RuntimeLimits, 'model' | 'models'>;

export function resolveLimits(limits: RuntimeLimits = {}): ResolvedLimits {
  return {
    stepsPerTurn: positive('stepsPerTurn', limits.stepsPerTurn ?? limits.maxSteps) ?? DEFAULT_STEPS_PER_TURN,
    maxLogBytes: positive('maxLogBytes', limits.maxLogBytes) ?? DEFAULT_MAX_LOG_BYTES,
    tokenBudget: limits.tokenBudget ?? Number.POSITIVE_INFINITY,
    maxConcurrentCalls: limits.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS,
    overflow: limits.overflow ?? 'queue',
    machineDepth: limits.machineDepth ?? DEFAULT_MACHINE_DEPTH,
    maxAgentIterations: limits.maxAgentIterations ?? DEFAULT_MAX_AGENT_ITERATIONS,
    maxToolResultChars: limits.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS,
    llmTimeoutMs: limits.llmTimeoutMs ?? DEFAULT_LLM_TIMEOUT_MS,
    retryBaseMs: limits.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    retryMaxMs: limits.retryMaxMs ?? DEFAULT_RETRY_MAX_MS,
    model: limits.model,
    models: limits.models,
  };
}

function positive(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!(value >= 1)) throw new FlowingError('RUNTIME_BAD_OPTIONS', `limits.${name} must be a number of at least 1, not ${String(value)}`);
  return value;
}

/** Where a call takes its slot: the runtime's semaphore, or its parent call's lent slot. */
export interface CallSlots {
  /** A slot if one is free now (its release function), else undefined. */
  tryAcquire(): (() => void) | undefined;
  /** Waits for a slot; leaves the queue with CANCELLED when the deadline aborts first. */
  acquire(deadline: Deadline): Promise<() => void>;
}

/** A counting semaphore for in-flight calls; waiters leave the queue when their signal aborts. */
export class Semaphore implements CallSlots {
  private active = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(private readonly capacity: number) {}

  /** Calls in flight right now. */
  get inFlight(): number {
    return this.active;
  }

  /** A slot if one is free now (its release function), else undefined. */
  tryAcquire(): (() => void) | undefined {
    if (this.active >= this.capacity) return undefined;
    this.active++;
    return this.releaser();
  }

  /** Waits for a slot; leaves the queue with CANCELLED when the deadline aborts first. */
  async acquire(deadline: Deadline): Promise<() => void> {
    if (deadline.isAborted) throw new FlowingError('CANCELLED', 'the call was cancelled while waiting for a slot');
    if (this.active < this.capacity) {
      this.active++;
      return this.releaser();
    }
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.waiters.push(wake);
    try {
      await deadline.race(woken);
    } catch {
      const index = this.waiters.indexOf(wake);
      if (index >= 0) this.waiters.splice(index, 1);
      else this.waiters.shift()?.(); // the slot was handed to this waiter as it left: pass it on
      throw new FlowingError('CANCELLED', 'the call was cancelled while waiting for a slot');
    }
    this.active++;
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiters.shift()?.();
    };
  }
}

/** What a saturated runtime answers (RUNTIME_SATURATED): try again after this many seconds. */
export const SATURATED_RETRY_AFTER_SECONDS = 1;

/**
 * Admission of runs under `overflow: 'refuse'`: counts the runs in progress and turns away the one beyond the
 * capacity. Decided synchronously when the send arrives, so a burst of N+k concurrent sends admits exactly N.
 * Under `'queue'` every run is admitted (the call semaphore does the waiting).
 */
export class RunAdmission {
  private active = 0;
  constructor(
    private readonly capacity: number,
    private readonly policy: 'queue' | 'refuse',
  ) {}

  /** Runs in progress that were admitted (always 0 under `'queue'`). */
  get inProgress(): number {
    return this.active;
  }

  /** The function that ends this run's admission, or the refusal when the runtime is saturated. */
  enter():
    | { leave: () => void }
    | { refusal: { code: 'RUNTIME_SATURATED'; message: string; details: { retryAfterSeconds: number; runsInProgress: number } } } {
    if (this.policy === 'queue') return { leave: () => {} };
    if (this.active >= this.capacity) {
      return {
        refusal: {
          code: 'RUNTIME_SATURATED',
          message: `${this.active} runs are in progress, the most this runtime takes at once (limits.maxConcurrentCalls with overflow 'refuse'); retry in ${SATURATED_RETRY_AFTER_SECONDS} s`,
          details: { retryAfterSeconds: SATURATED_RETRY_AFTER_SECONDS, runsInProgress: this.active },
        },
      };
    }
    this.active++;
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.active--;
      },
    };
  }
}

/**
 * The slots of calls made inside another call that holds a slot while it waits on them (an agent's tool calls): a
 * free slot of the runtime when there is one, else the parent's slot, lent to one of them at a time. The parent is
 * idle while it waits, so no more than the runtime's limit of calls work at once, and the nested calls can never
 * wait on slots that only their own parent's completion would free (with `maxConcurrentCalls: 1`, the agent's tools
 * run one by one on its slot instead of waiting forever).
 */
export class LentSlots implements CallSlots {
  private readonly lent = new Semaphore(1);
  constructor(private readonly runtime: CallSlots) {}

  tryAcquire(): (() => void) | undefined {
    return this.runtime.tryAcquire() ?? this.lent.tryAcquire();
  }

  acquire(deadline: Deadline): Promise<() => void> {
    return this.lent.acquire(deadline);
  }
}
