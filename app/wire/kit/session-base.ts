/**
 * What every dialect's session does the same way, whatever its link (DESIGN §2: only the dialect
 * differs): it goes by its profile's name, tells everything through one SessionEvents emitter,
 * and keeps the registration state it last announced — what the server knows of our services.
 * Each session class extends this and adds its own link, turns and registration rules.
 */
import type { ConnectionRef, RegistrationState } from '../../contract/connection.js';
import { Emitter } from '../../events.js';
import { DisposableStore } from '../../lifecycle.js';
import type { SessionEvents } from '../session.js';
import { MAX_STATUS_CHARS, cutString } from './bounds.js';

export abstract class SessionBase {
  readonly events = new Emitter<SessionEvents>();
  /**
   * What the session holds — its subscriptions to its link and turns, its timers — disposed when
   * it stops (after the link's last state has been told).
   */
  protected readonly store = new DisposableStore();
  /** Nothing is registered until the server has been told (or has asked) on a live link. */
  private registration: RegistrationState = { state: 'registering' };
  /** The UI has been told a registration state (the first is always told). */
  private registrationTold = false;

  /** `profile.id` and `profile.name` are read each time, as the session options hold them. */
  protected constructor(private readonly profile: { readonly id: string; readonly name: string }) {}

  /** The profile id: what identifies this connection everywhere (names need not be unique). */
  get id(): string {
    return this.profile.id;
  }

  /** The connection's display name, shown to the user and written in the audit log. */
  get name(): string {
    return this.profile.name;
  }

  /** Which connection a call, a prompt or an audit record belongs to. */
  get ref(): ConnectionRef {
    return { id: this.profile.id, name: this.profile.name };
  }

  get registrationState(): RegistrationState {
    return this.registration;
  }

  /**
   * Remember the new registration state and tell the UI. The same registration again (a server
   * re-listing an unchanged set or initialising again, in a loop if it likes) is nothing new: it
   * keeps its first time and is not told again, so it costs the windows nothing.
   */
  protected setRegistration(state: RegistrationState): void {
    if (this.registrationTold && sameRegistration(this.registration, state)) return;
    this.registrationTold = true;
    this.registration = state;
    this.events.emit('registration', state);
  }

  /** Text from the server for the user to see (a timeline notice), cut to a bounded length. */
  protected status(text: string): void {
    this.events.emit('status', cutString(text, MAX_STATUS_CHARS));
  }

  /**
   * A log line (never a secret: a dialect that quotes server text redacts it here), cut like a
   * status: it becomes a notice every window and the timeline keep, and it may quote the server.
   */
  protected log(level: 'info' | 'warn', message: string): void {
    this.events.emit('log', { level, message: cutString(message, MAX_STATUS_CHARS) });
  }
}

function sameRegistration(a: RegistrationState, b: RegistrationState): boolean {
  if (a.state === 'registered' && b.state === 'registered')
    return (
      a.services.length === b.services.length && a.services.every((s, i) => s === b.services[i])
    );
  if (a.state === 'failed' && b.state === 'failed') return a.message === b.message;
  return a.state === 'registering' && b.state === 'registering';
}
