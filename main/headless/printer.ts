/**
 * How the terminal host shows what happens: one line per event, replies streamed in place, all
 * from the contract's events and views. Whatever a server or a profile chose (reply text, STATUS,
 * emoji, names, paths, parameters) is escaped on its way out (terminal-text.ts): a server cannot
 * move the cursor, clear the screen or rewrite the permission question. Secrets never reach here
 * (tokens are not part of any event).
 */
import type { AuditRecord } from '../../app/contract/audit.js';
import type { AssistantItem, ToolItem } from '../../app/contract/chat.js';
import type { ConnectionView, ServiceView } from '../../app/contract/commands.js';
import type { ConnectionState, RegistrationState } from '../../app/contract/connection.js';
import type { PendingPrompt } from '../../app/contract/policy.js';
import { oneLine, replyText, safeJson } from './terminal-text.js';

/** Replies followed at once; one that never ends is forgotten past this many newer ones. */
const OPEN_REPLIES_LIMIT = 64;

interface ReplyProgress {
  /** The item's text as printed so far, and how much of its reasoning. */
  text: string;
  thought: number;
}

export class Printer {
  private openReply: string | undefined;
  private readonly replies = new Map<string, ReplyProgress>();
  /**
   * Replies already printed to their end: a later change of one (the timeline marks an ended
   * reply interrupted when the next turn starts) is not news, and would print it all again.
   */
  private readonly ended = new Set<string>();
  private readonly audioBytes = new Map<string, number>();
  private readonly shown = new Map<
    string,
    { status: ConnectionState['status']; state: string; registration: string }
  >();

  constructor(
    private readonly stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  /**
   * A connection view: what changed since the last one (views are re-sent whenever anything about
   * any connection changes). `label` names the connection when several run at once.
   */
  connection(view: ConnectionView, label?: string): void {
    const id = view.profile.id;
    const last = this.shown.get(id);
    const state = JSON.stringify(view.state);
    const registration = JSON.stringify(view.registration ?? null);
    this.shown.set(id, { status: view.state.status, state, registration });
    const wasLive = last !== undefined && last.status !== 'idle' && last.status !== 'offline';
    if (state !== last?.state) this.state(view.profile.name, view.state, wasLive);
    if (registration !== last?.registration && view.registration)
      this.registration(view.registration, label);
  }

  /** `wasLive`: it had a session, so going back to idle (none) is a disconnect. */
  private state(server: string, state: ConnectionState, wasLive: boolean): void {
    switch (state.status) {
      case 'connecting':
        return this.line(
          `… connecting to ${server}${state.attempt > 1 ? ` (attempt ${state.attempt})` : ''}`,
        );
      case 'authenticating':
        return this.line('… logging in');
      case 'ready':
        return this.line(`✓ connected to ${server}`);
      case 'reconnecting': {
        const secs = Math.max(0, Math.round((state.nextAt - Date.now()) / 1000));
        return this.line(
          `↻ connection lost (${state.lastError}); reconnecting in ${secs} s (attempt ${state.attempt})`,
        );
      }
      case 'offline':
        if (state.reason === 'stopped') return this.line('✓ disconnected');
        return this.err(
          `✗ ${state.reason === 'auth_failed' ? 'login failed' : 'cannot connect'}: ${state.message}`,
        );
      case 'idle':
        if (wasLive) this.line('✓ disconnected');
        return;
    }
  }

  private registration(r: RegistrationState, server?: string): void {
    const on = server ? ` with ${server}` : '';
    if (r.state === 'registered')
      this.line(
        `✓ registered ${r.services.length} service(s)${on}: ${r.services.join(', ') || '(none)'}`,
      );
    if (r.state === 'failed') this.err(`✗ registering services${on} failed: ${r.message}`);
  }

  /**
   * An assistant item as it grows: its new text streams after `assistant› `, its reasoning shows as
   * `(thinking)` lines, and it closes when done (or cut off).
   */
  reply(item: AssistantItem): void {
    if (this.ended.has(item.id)) return;
    let progress = this.replies.get(item.id);
    if (!progress) {
      progress = { text: '', thought: 0 };
      this.replies.set(item.id, progress);
      if (this.replies.size > OPEN_REPLIES_LIMIT) {
        const oldest = this.replies.keys().next().value;
        if (oldest !== undefined) this.replies.delete(oldest);
      }
    }
    const thought = item.thought ?? '';
    if (thought.length > progress.thought) {
      this.closeReply();
      this.stdout.write(`(thinking) ${replyText(thought.slice(progress.thought))}\n`);
      progress.thought = thought.length;
    }
    // A final text that is the server's own whole reply (not the pieces) is not printed twice.
    const fresh = item.text.startsWith(progress.text) ? item.text.slice(progress.text.length) : '';
    if (fresh) {
      if (this.openReply !== item.id) {
        this.closeReply();
        this.stdout.write('assistant› ');
        this.openReply = item.id;
      }
      this.stdout.write(replyText(fresh));
      progress.text = item.text;
    }
    if (item.state === 'streaming') return;
    this.replies.delete(item.id);
    this.ended.add(item.id);
    if (this.ended.size > OPEN_REPLIES_LIMIT) this.ended.delete(this.ended.values().next().value!);
    if (this.openReply === item.id) {
      this.stdout.write(item.state === 'interrupted' ? ' [interrupted]\n' : '\n');
      this.openReply = undefined;
    }
    const key = `${item.connection}:${item.taskId}`;
    const bytes = this.audioBytes.get(key);
    if (bytes) {
      this.audioBytes.delete(key);
      this.line(`  (${bytes} bytes of reply audio; play it in the desktop app)`);
    }
  }

  mood(emoji: string): void {
    this.line(`  (mood: ${emoji})`);
  }

  audio(connection: string, taskId: string, bytes: number): void {
    const key = `${connection}:${taskId}`;
    this.audioBytes.set(key, (this.audioBytes.get(key) ?? 0) + bytes);
    // Audio of a reply whose end never comes must not pile up keys.
    if (this.audioBytes.size > OPEN_REPLIES_LIMIT) {
      const oldest = this.audioBytes.keys().next().value;
      if (oldest !== undefined) this.audioBytes.delete(oldest);
    }
  }

  /** A finished tool call, in one line. */
  call(c: ToolItem): void {
    const what = c.summary ?? c.service;
    const result = c.outcome === 'ok' ? 'ok' : `${c.outcome}: ${c.message ?? c.code ?? ''}`;
    this.line(
      `⚙ ${c.service} — ${what} — ${c.decision} — ${result} (${c.durationMs} ms${c.auditSeq ? `, audit #${c.auditSeq}` : ''})`,
    );
  }

  prompt(p: PendingPrompt, now: number): void {
    const secs = Math.max(0, Math.round((p.expiresAt - now) / 1000));
    this.closeReply();
    const lines = [
      `? ${p.connection.name} wants to run ${p.service}: ${p.summary}`,
      ...(p.resolvedPaths.length ? [`  path: ${p.resolvedPaths.join(', ')}`] : []),
      `  params: ${safeJson(p.params)}`,
    ];
    this.stdout.write(
      lines.map((l) => `${oneLine(l)}\n`).join('') +
        `  allow? [y] once  [s] this session  [a] always  [n] deny  (denied in ${secs} s) › `,
    );
  }

  services(list: readonly ServiceView[]): void {
    for (const s of list) {
      const grants = s.alwaysGrants.length ? `, always allowed: ${s.alwaysGrants.join(', ')}` : '';
      this.line(
        `  ${s.enabled ? '●' : '○'} ${s.name.padEnd(20)} ${s.risk.padEnd(6)} policy ${s.policy}${grants} — ${s.title}`,
      );
    }
  }

  audit(records: readonly AuditRecord[], total: number): void {
    if (!records.length) return this.line('  (no calls recorded yet)');
    for (const r of records) this.line(`  ${formatAuditLine(r)}`);
    if (total > records.length)
      this.line(`  … ${total - records.length} older; see 'advent-agent audit'`);
  }

  info(text: string): void {
    this.line(text);
  }

  notice(level: 'info' | 'warn' | 'error', message: string): void {
    if (level === 'info') this.line(message);
    else this.err(`${level === 'warn' ? '!' : '✗'} ${message}`);
  }

  private closeReply(): void {
    if (this.openReply !== undefined) {
      this.stdout.write('\n');
      this.openReply = undefined;
    }
  }

  private line(text: string): void {
    this.closeReply();
    this.stdout.write(`${oneLine(text)}\n`);
  }

  private err(text: string): void {
    this.closeReply();
    this.stderr.write(`${oneLine(text)}\n`);
  }
}

/** One audit record in one line, safe for a terminal (`advent-agent audit`, `/audit`). */
export function formatAuditLine(r: AuditRecord): string {
  const error = r.outcome === 'ok' ? '' : ` ${r.error ?? ''}${r.message ? `: ${r.message}` : ''}`;
  return oneLine(
    `#${r.seq} ${r.ts} ${r.connection} ${r.service} ${r.decision} ${r.outcome}${error} (${r.durationMs} ms) ${safeJson(r.params)}`,
  );
}
