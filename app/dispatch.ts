/**
 * THE gate (DESIGN §1.1). Every call from any server, in any dialect, and every user-run from the
 * UI goes through `Dispatcher.dispatch`:
 *
 *   look up (offered to this connection?) → enabled? → bounded? → validate params → preview → permission
 *     → intent recorded (write-ahead) → run (with timeout) → outcome recorded → reply
 *
 * It never throws: every outcome is a value, and every refusal carries a stable code plus a message
 * written for the AI model to read and act on. Anything unexpected fails closed.
 *
 * What is recorded when (the README's "What the agent guarantees" states it for users):
 * - A service that can change something or send data away (risk `write`, `system`, `private`) runs
 *   only once its intent (the call, its params, the decision) is durable in the audit log; its
 *   outcome is durable before the reply leaves. If the intent cannot be written, the service does
 *   not run (`audit_unavailable`). A crash while it runs leaves the intent alone, which the next
 *   start records as `interrupted`.
 * - A harmless `read` is recorded once, after it ran and before its result leaves: a crash while
 *   it runs leaves no record of a call that changed nothing and answered no one.
 * - A call refused before anything ran (unknown, disabled, invalid, denied, no answer, duplicate)
 *   is one record, durable before the refusal leaves.
 */
import type { Clock } from './clock.js';
import type { AuditEntry, AuditRecord, Decision, Dialect, Outcome } from './contract/audit.js';
import type { ConnectionRef } from './contract/connection.js';
import type { ErrorCode } from './contract/errors.js';
import type { PendingPrompt, PromptResolution } from './contract/policy.js';
import { offerKeyOf } from './contract/offer.js';
import { Emitter } from './events.js';
import { type CallPace, type CallPaceLimits, paceWait } from './call-pace.js';
import type { Asker, AskOptions } from './permissions/broker.js';
import type { DecideInput, Decision as PolicyDecision } from './permissions/policy.js';
import { cutName, paramsShapeProblem } from './audit/bounds.js';
import { shortLine } from './unsafe-chars.js';
import type { FilesSandbox } from './services/files/sandbox.js';
import {
  type CallPreview,
  type Service,
  ServiceFailure,
  type VisionTarget,
} from './services/service.js';

export interface CallRequest {
  /** The connection the call came on (LOCAL_CONNECTION for a user-run). */
  connection: ConnectionRef;
  dialect: Dialect;
  callId: string;
  service: string;
  params: unknown;
  /** Started by the user from the UI ("Try it"): no prompt, audited as `user-run`. */
  userRun?: boolean;
  /**
   * The server lists user-only services (XiaoZhi `withUserTools`), so it may call them. That is
   * visibility, not authorisation: the call is decided like any other server call.
   */
  userTools?: boolean;
  /**
   * The dialect recognised this call as a repeat of one already received (robot servers send
   * each execute twice). It is recorded as `duplicate` and never run.
   */
  duplicateOf?: string;
  /**
   * This call is the one copy of a call that already took its connection's turn (a robot
   * execute's twin, sent with and without an id): it takes no turn of its own, so a server that
   * sends every call twice is paced like one that sends it once. Only ever with `duplicateOf`.
   */
  twinOfPaced?: boolean;
  /** The server's vision service (XiaoZhi `capabilities.vision`), for take_screenshot. */
  vision?: VisionTarget;
  /**
   * Aborted when the server stops waiting for this call: it cancelled it (MCP
   * `notifications/cancelled`) or the connection it came on ended. A pending prompt is then
   * withdrawn, nothing more runs, a running service is asked to stop, and the call is recorded as
   * cancelled. The reason (an Error's message or a string) goes into the record. Whoever aborts
   * it sends no answer: the server is no longer listening for one.
   */
  signal?: AbortSignal;
  /** Asks the caller's own user when no window is open (an MCP client's elicitation). */
  asker?: Asker;
}

export type DispatchResult =
  | { ok: true; data: unknown; auditSeq?: number }
  | { ok: false; code: ErrorCode; message: string; auditSeq?: number };

/** What the gate needs from the registry, policy, broker and audit log (kept narrow on purpose). */
export interface GateRegistry {
  get(name: string): Service | undefined;
  isEnabled(name: string): boolean;
  validate(name: string, params: unknown): { ok: true } | { ok: false; message: string };
  list(): readonly { service: Service; enabled: boolean }[];
}

export interface GatePolicy {
  decide(q: DecideInput): PolicyDecision;
  remember(grantKey: string, scope: 'session' | 'always'): Promise<void> | void;
}

export interface GateBroker {
  ask(
    req: Omit<PendingPrompt, 'id' | 'expiresAt'>,
    options?: AskOptions,
  ): Promise<PromptResolution>;
}

/** What the gate records ahead of running a service: the call and the decision, no outcome yet. */
export type IntentEntry = Omit<
  AuditEntry,
  'outcome' | 'error' | 'message' | 'runMs' | 'durationMs' | 'intentSeq'
>;

export interface GateAudit {
  /** The call's final record (its outcome, after an intent: with `intentSeq`). */
  append(entry: AuditEntry): Promise<AuditRecord>;
  /** The call's intent, durable when this resolves; the service runs only then. */
  intent(entry: IntentEntry): Promise<{ seq: number }>;
}

export interface GateDeps {
  registry: GateRegistry;
  /**
   * Whether the user offers `service` to the connection `connectionId` (its selection on the
   * Services page). A service not offered is, to that connection, a service that does not exist.
   * Absent: every service is offered to every connection.
   */
  offered?: (connectionId: string, service: string) => boolean;
  policy: GatePolicy;
  broker: GateBroker;
  audit: GateAudit;
  files: FilesSandbox;
  clock: Clock;
  /** How fast each connection's calls may start (call-pace.ts); absent: unpaced. */
  pace?: CallPace;
  /** Questions one connection may have waiting for the user (default MAX_WAITING_PROMPTS). */
  maxWaitingPrompts?: number;
}

/** Live view of a call for the timeline (tool cards) and the terminal. */
export interface CallStarted {
  key: string;
  connection: ConnectionRef;
  dialect: Dialect;
  callId: string;
  service: string;
  params: unknown;
  at: number;
}

export interface CallFinished {
  key: string;
  connection: ConnectionRef;
  callId: string;
  service: string;
  decision: Decision;
  outcome: Outcome;
  summary?: string;
  code?: ErrorCode;
  message?: string;
  data?: unknown;
  durationMs: number;
  /** Time spent waiting for the user's answer, and the service's own run time (when it ran). */
  waitMs?: number;
  runMs?: number;
  auditSeq?: number;
}

export type GateEvents = {
  callStarted: CallStarted;
  callWaiting: { key: string; summary: string };
  callFinished: CallFinished;
  /** The audit log failed to record a call: shown to the user; calls stay refused until it works. */
  auditError: { message: string };
  /** A connection calls faster than its pace: its calls now wait their turn (once per streak). */
  callsPaced: { connection: ConnectionRef } & CallPaceLimits;
};

interface Verdict {
  decision: Decision;
  result: DispatchResult;
  summary?: string;
  /** The service was let run (its own failure then reads as `error`, not `refused`). */
  ran?: boolean;
  waitMs?: number;
  runMs?: number;
  /** The seq of the call's intent record (write-ahead services). */
  intentSeq?: number;
  /** The server withdrew the call before its outcome was known (see CallRequest.signal). */
  withdrawn?: boolean;
}

/** The permission step's answer: run under this decision, or a refusal. */
type Permission = (
  { run: true; decision: Decision } | { run: false; decision: Decision; result: DispatchResult }
) & {
  /** The user was asked (the time until the answer is the call's waitMs), and what came back. */
  asked?: boolean;
  answer?: PromptResolution;
};

const refuse = (code: ErrorCode, message: string): DispatchResult => ({ ok: false, code, message });

const switchedOff = (name: string): DispatchResult =>
  refuse(
    'disabled',
    `the service '${name}' is switched off by the user; do not retry it — tell the user it can be switched on in the app's Services page`,
  );

const blocked = (name: string): DispatchResult =>
  refuse(
    'denied',
    `the user has blocked the service '${name}'; do not retry — tell the user it is blocked in the app's Services page`,
  );

/** What a grant is remembered under: the service, or the service and the preview's escalation. */
const grantKeyOf = (service: Service, preview: CallPreview | undefined): string =>
  preview?.escalation ? `${service.name}:${preview.escalation}` : service.name;

/**
 * Permission questions one connection may have waiting for the user at once; more are refused
 * (`limit_reached`) without asking. Far above what a person answers in a row.
 */
export const MAX_WAITING_PROMPTS = 8;

export class Dispatcher {
  readonly events = new Emitter<GateEvents>();
  private auditBroken: string | undefined;
  private seq = 0;
  /** Questions waiting for the user, per connection (the MCP apps together, as they are paced). */
  private readonly asking = new Map<string, number>();

  constructor(private readonly deps: GateDeps) {}

  /** Calls still running; close() waits for them so every one is answered and recorded. */
  private readonly inFlight = new Set<Promise<DispatchResult>>();

  dispatch(call: CallRequest): Promise<DispatchResult> {
    const running = this.inTurn(call);
    this.inFlight.add(running);
    void running.finally(() => this.inFlight.delete(running));
    return running;
  }

  /** Resolves when every call in progress has finished (each is bounded by its timeouts). */
  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * A server's call starts in its connection's turn (call-pace.ts): past the pace it waits, before
   * anything is shown or recorded, so a flood costs a timer per call and nothing more. A call
   * that need not wait starts at once, with no extra turn of the event loop.
   */
  private inTurn(call: CallRequest): Promise<DispatchResult> {
    const { pace } = this.deps;
    if (!pace || call.userRun || (call.twinOfPaced && call.duplicateOf !== undefined))
      return this.handle(call);
    // Every MCP app shares one turn, as it shares one offer: an app's sessions are named by the
    // app itself, and a fresh name per session must not buy a fresh burst.
    const turn = pace.take(offerKeyOf(call.connection.id));
    if (turn.startsStreak)
      this.events.emit('callsPaced', { connection: call.connection, ...pace.limits });
    if (turn.waitMs === 0) return this.handle(call);
    // A call whose server stops waiting goes on at once, and is recorded as cancelled.
    return paceWait(this.deps.clock, turn.waitMs, call.signal).then(() => this.handle(call));
  }

  private async handle(call: CallRequest): Promise<DispatchResult> {
    const { clock } = this.deps;
    const started = clock.now();
    const key = `${call.connection.id}:${call.callId}:${++this.seq}`;
    this.events.emit('callStarted', {
      key,
      connection: call.connection,
      dialect: call.dialect,
      callId: call.callId,
      service: call.service,
      params: call.params,
      at: started,
    });

    let verdict: Verdict;
    try {
      verdict = await this.decideAndRun(call, key, started);
    } catch (err) {
      // Only a bug gets here (every step returns values); fail closed and say so.
      verdict = {
        decision: 'denied',
        result: refuse(
          'service_error',
          `the agent failed while handling '${call.service}': ${errorText(err)}`,
        ),
      };
    }

    const durationMs = Math.max(0, clock.now() - started);
    const outcome: Outcome = verdict.result.ok
      ? 'ok'
      : verdict.withdrawn
        ? 'cancelled'
        : verdict.ran
          ? 'error'
          : 'refused';
    const auditSeq = await this.record(call, started, verdict, outcome, durationMs);
    let result: DispatchResult =
      auditSeq === undefined ? verdict.result : { ...verdict.result, auditSeq };
    // A read's data leaves only once its record is written (DESIGN §1): with no intent before it
    // and no record after, nothing would show it ran. (A write-ahead call's intent records it, and
    // its change is made: its answer still goes.)
    if (auditSeq === undefined && result.ok && verdict.intentSeq === undefined)
      result = refuse(
        'audit_unavailable',
        `the agent could not record this call (${this.auditBroken ?? 'the audit log failed'}), so its result of '${call.service}' is withheld; try again later`,
      );
    this.events.emit('callFinished', {
      key,
      connection: call.connection,
      callId: call.callId,
      service: call.service,
      decision: verdict.decision,
      outcome,
      summary: verdict.summary,
      durationMs,
      ...(verdict.waitMs !== undefined && { waitMs: verdict.waitMs }),
      ...(verdict.runMs !== undefined && { runMs: verdict.runMs }),
      auditSeq,
      ...(result.ok ? { data: result.data } : { code: result.code, message: result.message }),
    });
    return result;
  }

  private async decideAndRun(call: CallRequest, key: string, startedAt: number): Promise<Verdict> {
    const { registry } = this.deps;
    if (call.duplicateOf !== undefined)
      return {
        decision: 'duplicate',
        result: refuse(
          'duplicate',
          `this call repeats call '${call.duplicateOf}', received moments ago; it was not run twice`,
        ),
      };
    const service = registry.get(call.service);
    // What this connection was given: a call to anything else (a hostile or prompt-injected server
    // trying a tool it was never offered) is refused as unknown, and its names are not told.
    const offered = (name: string): boolean =>
      call.userRun === true || (this.deps.offered?.(call.connection.id, name) ?? true);
    if (
      !service ||
      (service.userOnly && !call.userRun && !call.userTools) ||
      !offered(service.name)
    ) {
      const names = registry
        .list()
        .filter((s) => s.enabled && !s.service.userOnly && offered(s.service.name))
        .map((s) => s.service.name);
      return {
        decision: 'invalid',
        result: refuse(
          'unknown_service',
          `there is no service named '${cutName(String(call.service), 64)}'` +
            (names.length
              ? `; available services: ${names.join(', ')}`
              : '; no services are enabled'),
        ),
      };
    }
    if (!call.userRun && !registry.isEnabled(service.name))
      return { decision: 'disabled', result: switchedOff(service.name) };
    // Before anything walks them (the validator, the preview, the audit's redaction and hash):
    // params nested or sized past the bounds are refused here, with a walk that never recurses.
    const shape = paramsShapeProblem(call.params);
    if (shape !== undefined) {
      return {
        decision: 'invalid',
        result: refuse('invalid_params', `invalid call to '${service.name}': ${shape}`),
      };
    }
    const valid = registry.validate(service.name, call.params);
    if (!valid.ok) {
      return {
        decision: 'invalid',
        result: refuse('invalid_params', `invalid call to '${service.name}': ${valid.message}`),
      };
    }
    const writeAhead = service.risk !== 'read';
    if (!writeAhead && this.auditBroken !== undefined) {
      // A read is recorded only after it ran: while the log fails, nothing would record it.
      // (A write-ahead service tries its intent instead, which is the test of the log.)
      return {
        decision: 'denied',
        result: refuse(
          'audit_unavailable',
          `the agent cannot record calls right now (${this.auditBroken}), so '${service.name}' was not run; try again later`,
        ),
      };
    }

    const params = call.params as Record<string, unknown>;
    const controller = new LazyAbort();
    /** The preview looked at the user's files: its failure may tell what is there. */
    let looked = false;
    const ctx = {
      get signal(): AbortSignal {
        return controller.signal;
      },
      callId: call.callId,
      connection: call.connection,
      files:
        service.preview && service.risk === 'write'
          ? noticing(this.deps.files, () => (looked = true))
          : this.deps.files,
      clock: this.deps.clock,
      dialect: call.dialect,
      ...(call.vision ? { vision: call.vision } : {}),
    };

    let preview: CallPreview | undefined;
    /** The preview failure of a service that asks, told only once the user has said yes. */
    let held: DispatchResult | undefined;
    if (service.preview) {
      try {
        preview = await service.preview(params, ctx);
      } catch (err) {
        const failure = failureOf(service, err);
        // A preview that looked at the user's files (is the file there, is it a folder, how big,
        // what kind) tells that much by failing, so its failure waits for the user's yes, as a
        // private service's data would (and a deny policy or a "no" tells nothing): otherwise a
        // server could probe names with create_file and learn which exist, unasked. Params the
        // schema refused, or a preview that failed on the params alone (a file: address), tell
        // nothing about the user's things and are refused at once.
        if (
          (service.risk !== 'private' && !looked) ||
          call.userRun ||
          (!failure.ok && failure.code === 'invalid_params')
        )
          return { decision: 'invalid', result: failure };
        held = failure;
        preview = { summary: plainSummary(service, params), resolvedPaths: [] };
      }
    }

    const summary = preview?.summary;
    if (call.signal?.aborted) return withdrawnVerdict(call, service, 'withdrawn', summary);
    const asked = this.deps.clock.now();
    const permission: Permission = call.userRun
      ? { run: true, decision: 'user-run' }
      : await this.permit(call, service, preview, key);
    const waitMs = permission.asked ? Math.max(0, this.deps.clock.now() - asked) : undefined;
    // While the question waited, the user may have switched the service off, blocked it or
    // stopped offering it to this server (in another window, or the terminal): that latest word
    // wins over a yes given to the question before, and is why a question it dropped ended.
    if (permission.asked && (permission.run || permission.answer === 'cancelled')) {
      const revoked = this.revoked(call, service, preview, offered);
      if (revoked) return { ...revoked, summary, waitMs };
    }
    if (!permission.run)
      return {
        decision: permission.decision,
        result: permission.result,
        summary,
        waitMs,
        withdrawn: permission.decision === 'withdrawn',
      };
    // Allowed, but the server stopped waiting meanwhile: an allow that came too late runs nothing.
    if (call.signal?.aborted)
      return { ...withdrawnVerdict(call, service, permission.decision, summary), waitMs };
    if (held) return { decision: permission.decision, result: held, summary, waitMs };

    let intentSeq: number | undefined;
    if (writeAhead) {
      try {
        intentSeq = (
          await this.deps.audit.intent({
            ts: new Date(startedAt).toISOString(),
            connection: call.connection.name,
            connectionId: call.connection.id,
            dialect: call.dialect,
            callId: call.callId,
            service: call.service,
            params: call.params,
            decision: permission.decision,
            ...(waitMs !== undefined && { waitMs }),
          })
        ).seq;
        this.auditBroken = undefined;
      } catch (err) {
        this.auditFailed(err);
        return {
          decision: permission.decision,
          summary,
          waitMs,
          result: refuse(
            'audit_unavailable',
            `the agent could not record this call before running it (${errorText(err)}), so '${service.name}' was not run; try again later`,
          ),
        };
      }
    }

    if (call.signal?.aborted)
      return {
        ...withdrawnVerdict(call, service, permission.decision, summary),
        waitMs,
        intentSeq,
      };

    // A server that stops waiting while the service runs asks it to stop; what the service then
    // really did (finished anyway, or stopped) is what gets recorded, bounded by its timeout.
    const signal = call.signal;
    const stop = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    const running = this.deps.clock.now();
    let result: DispatchResult;
    try {
      result = await this.run(service, params, ctx, controller, preview);
    } finally {
      signal?.removeEventListener('abort', stop);
    }
    const runMs = Math.max(0, this.deps.clock.now() - running);
    return {
      decision: permission.decision,
      result,
      summary,
      ran: true,
      waitMs,
      runMs,
      intentSeq,
      ...(signal?.aborted && { withdrawn: true }),
    };
  }

  /** The permission step: a decision to run, or a refusal. */
  /**
   * What the user changed, while they were asked, that takes the call's permission back: the
   * service switched off, blocked by its policy, or no longer offered to this connection.
   */
  private revoked(
    call: CallRequest,
    service: Service,
    preview: CallPreview | undefined,
    offered: (name: string) => boolean,
  ): Pick<Verdict, 'decision' | 'result'> | undefined {
    if (!this.deps.registry.isEnabled(service.name))
      return { decision: 'disabled', result: switchedOff(service.name) };
    if (!offered(service.name))
      return {
        decision: 'invalid',
        result: refuse(
          'unknown_service',
          `the user stopped offering '${service.name}' to this connection while it waited for their answer, so it was not run`,
        ),
      };
    const now = this.deps.policy.decide({
      service: service.name,
      risk: service.risk,
      grantKey: grantKeyOf(service, preview),
      escalation: Boolean(preview?.escalation),
    });
    if (now.kind === 'deny') return { decision: 'denied', result: blocked(service.name) };
    return undefined;
  }

  private async permit(
    call: CallRequest,
    service: Service,
    preview: CallPreview | undefined,
    key: string,
  ): Promise<Permission> {
    const { policy, broker } = this.deps;
    const grantKey = grantKeyOf(service, preview);
    const decided = policy.decide({
      service: service.name,
      risk: service.risk,
      grantKey,
      escalation: Boolean(preview?.escalation),
    });
    switch (decided.kind) {
      case 'auto':
        return { run: true, decision: 'auto' };
      case 'granted':
        return {
          run: true,
          decision: decided.scope === 'session' ? 'allowed-session' : 'allowed-always',
        };
      case 'deny':
        return { run: false, decision: 'denied', result: blocked(service.name) };
      case 'ask':
        break;
    }

    // A server asking faster than the user can answer gets its extra questions refused, not
    // queued: a wall of prompts is how a "yes" gets clicked without reading.
    const group = offerKeyOf(call.connection.id);
    const waiting = this.asking.get(group) ?? 0;
    if (waiting >= (this.deps.maxWaitingPrompts ?? MAX_WAITING_PROMPTS))
      return {
        run: false,
        decision: 'denied',
        result: refuse(
          'limit_reached',
          `${waiting} questions from this connection are already waiting for the user, so '${service.name}' was not run and the user was not asked; wait for those answers before asking again`,
        ),
      };
    const summary = preview?.summary ?? `Run ${service.title || service.name}`;
    this.events.emit('callWaiting', { key, summary });
    this.asking.set(group, waiting + 1);
    let answer: PromptResolution;
    try {
      answer = await broker.ask(
        {
          connection: call.connection,
          service: service.name,
          grantKey,
          params: call.params,
          summary,
          resolvedPaths: preview?.resolvedPaths ?? [],
        },
        { signal: call.signal, asker: call.asker },
      );
    } finally {
      const left = (this.asking.get(group) ?? 1) - 1;
      if (left > 0) this.asking.set(group, left);
      else this.asking.delete(group);
    }
    return {
      ...(await this.answered(answer, call, service, grantKey, summary)),
      asked: true,
      answer,
    };
  }

  private async answered(
    answer: PromptResolution,
    call: CallRequest,
    service: Service,
    grantKey: string,
    summary: string,
  ): Promise<Permission> {
    const { policy } = this.deps;
    switch (answer) {
      case 'withdrawn': {
        const { result } = withdrawnVerdict(call, service, 'withdrawn', summary);
        return { run: false, decision: 'withdrawn', result };
      }
      case 'once':
        return { run: true, decision: 'allowed-once' };
      case 'session':
      case 'always':
        await policy.remember(grantKey, answer);
        return { run: true, decision: answer === 'session' ? 'allowed-session' : 'allowed-always' };
      case 'deny':
        return {
          run: false,
          decision: 'denied',
          result: refuse(
            'denied',
            `the user declined to let '${service.name}' run (${summary}); do not retry unless the user asks again`,
          ),
        };
      case 'timeout':
        return {
          run: false,
          decision: 'timeout',
          result: refuse(
            'prompt_timeout',
            `the user did not answer the permission request for '${service.name}' in time, so it was not run`,
          ),
        };
      case 'cancelled':
        return {
          run: false,
          decision: 'denied',
          result: refuse(
            'no_prompt_ui',
            `'${service.name}' needs the user's permission and no one could be asked (no window is open to approve it), so it was not run; tell the user to open Advent Agent to approve it, or to allow '${service.name}' on its Services page`,
          ),
        };
    }
  }

  private async run(
    service: Service,
    params: Record<string, unknown>,
    ctx: Parameters<Service['run']>[1],
    controller: LazyAbort,
    plan: CallPreview | undefined,
  ): Promise<DispatchResult> {
    const { clock } = this.deps;
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const timeout = new Promise<DispatchResult>((resolve) => {
      timer = clock.setTimeout(() => {
        controller.abort(new Error('service timed out'));
        resolve(
          refuse(
            'service_timeout',
            // Asked, not made: an imported tool's server may finish the work anyway, so neither
            // the model nor the audit record may read this as "nothing happened".
            `'${service.name}' did not finish within ${formatSeconds(service.timeoutMs)}; it was asked to stop, but what it was doing may still complete`,
          ),
        );
      }, service.timeoutMs);
    });
    const work = (async (): Promise<DispatchResult> => {
      try {
        // The plan the prompt showed: a service may do only what it describes.
        return { ok: true, data: await service.run(params, ctx, plan) };
      } catch (err) {
        return failureOf(service, err);
      }
    })();
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clock.clearTimeout(timer);
    }
  }

  private async record(
    call: CallRequest,
    started: number,
    verdict: Verdict,
    outcome: Outcome,
    durationMs: number,
  ): Promise<number | undefined> {
    const { result } = verdict;
    try {
      const rec = await this.deps.audit.append({
        ts: new Date(started).toISOString(),
        connection: call.connection.name,
        connectionId: call.connection.id,
        dialect: call.dialect,
        callId: call.callId,
        service: call.service,
        params: call.params,
        decision: verdict.decision,
        outcome,
        ...(result.ok ? {} : { error: result.code, message: result.message }),
        ...(verdict.waitMs !== undefined && { waitMs: verdict.waitMs }),
        ...(verdict.runMs !== undefined && { runMs: verdict.runMs }),
        durationMs,
        ...(verdict.intentSeq !== undefined && { intentSeq: verdict.intentSeq }),
      });
      this.auditBroken = undefined;
      return rec.seq;
    } catch (err) {
      // The call stays recorded by its intent when it had one (read back as interrupted at the
      // next start); its reply still goes, since the service already ran.
      this.auditFailed(err);
      return undefined;
    }
  }

  private auditFailed(err: unknown): void {
    this.auditBroken = errorText(err);
    this.events.emit('auditError', { message: this.auditBroken });
  }
}

/** `files`, calling `looked` as soon as anything on the disk is checked, read or written. */
function noticing(files: FilesSandbox, looked: () => void): FilesSandbox {
  const on =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      looked();
      return fn(...args);
    };
  return {
    roots: () => files.roots(),
    maxFileBytes: () => files.maxFileBytes(),
    resolve: on((input) => files.resolve(input)),
    resolveEntry: on((input, wanted) => files.resolveEntry(input, wanted)),
    writeNew: on((target, data, signal) => files.writeNew(target, data, signal)),
    replace: on((target, data, signal) => files.replace(target, data, signal)),
    readFile: on((entry, max, signal) => files.readFile(entry, max, signal)),
    readStart: on((entry, max, signal) => files.readStart(entry, max, signal)),
    info: on((entry) => files.info(entry)),
    list: on((entry, max) => files.list(entry, max)),
    walk: on((entry, visit, options) => files.walk(entry, visit, options)),
  };
}

/**
 * An AbortController made only when a service asks for its signal: most never do, and making one
 * (an EventTarget) is a measurable part of a call that takes a few dozen microseconds.
 */
class LazyAbort {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** The call the server stopped waiting for: not run (or stopped), recorded as cancelled. */
function withdrawnVerdict(
  call: CallRequest,
  service: Service,
  decision: Decision,
  summary: string | undefined,
): Verdict {
  const reason = call.signal?.reason;
  const why =
    reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
  return {
    decision,
    summary,
    withdrawn: true,
    result: refuse(
      'cancelled',
      `the server stopped waiting for this call${why ? ` (${why})` : ''}, so '${service.name}' was not run`,
    ),
  };
}

/** The prompt's sentence for a call with no preview to describe it: its title and first params. */
function plainSummary(service: Service, params: Record<string, unknown>): string {
  const shown = Object.entries(params)
    .filter((e): e is [string, string | number] => ['string', 'number'].includes(typeof e[1]))
    .slice(0, 2)
    .map(([k, v]) => `${shortLine(k, 32)} “${shortLine(String(v), 80)}”`);
  return `${service.title || service.name}${shown.length ? ` (${shown.join(', ')})` : ''}`;
}

function failureOf(service: Service, err: unknown): DispatchResult {
  if (err instanceof ServiceFailure) return refuse(err.code, err.message);
  return refuse('service_error', `'${service.name}' failed: ${errorText(err)}`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
