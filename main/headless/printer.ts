/**
 * How the terminal host shows what happens: one line per event, replies streamed in place.
 * Secrets never reach here (tokens are not part of any event).
 */
import type { ServiceView } from '../../app/agent.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import type { ConnectionState, RegistrationState } from '../../app/contract/connection.js';
import type { PendingPrompt } from '../../app/contract/policy.js';
import type { CallFinished } from '../../app/dispatch.js';

export class Printer {
  private openReply: string | undefined;
  private audioBytes = new Map<string, number>();

  constructor(
    private readonly stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  state(server: string, state: ConnectionState): void {
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
        return;
    }
  }

  /** `server` names the connection when several run at once. */
  registration(r: RegistrationState, server?: string): void {
    const on = server ? ` with ${server}` : '';
    if (r.state === 'registered')
      this.line(
        `✓ registered ${r.services.length} service(s)${on}: ${r.services.join(', ') || '(none)'}`,
      );
    if (r.state === 'failed') this.err(`✗ registering services${on} failed: ${r.message}`);
  }

  replyDelta(taskId: string, text: string): void {
    if (this.openReply !== taskId) {
      this.closeReply();
      this.stdout.write('assistant› ');
      this.openReply = taskId;
    }
    this.stdout.write(text);
  }

  replyDone(taskId: string, interrupted = false): void {
    if (this.openReply === taskId) {
      this.stdout.write(interrupted ? ' [interrupted]\n' : '\n');
      this.openReply = undefined;
    }
    const bytes = this.audioBytes.get(taskId);
    if (bytes) {
      this.audioBytes.delete(taskId);
      this.line(`  (${bytes} bytes of reply audio; play it in the desktop app)`);
    }
  }

  mood(emoji: string): void {
    this.line(`  (mood: ${emoji})`);
  }

  audio(taskId: string, bytes: number): void {
    this.audioBytes.set(taskId, (this.audioBytes.get(taskId) ?? 0) + bytes);
  }

  call(c: CallFinished): void {
    const what = c.summary ?? c.service;
    const result = c.outcome === 'ok' ? 'ok' : `${c.outcome}: ${c.message ?? c.code ?? ''}`;
    this.line(
      `⚙ ${c.service} — ${what} — ${c.decision} — ${result} (${c.durationMs} ms${c.auditSeq ? `, audit #${c.auditSeq}` : ''})`,
    );
  }

  prompt(p: PendingPrompt, now: number): void {
    const secs = Math.max(0, Math.round((p.expiresAt - now) / 1000));
    this.closeReply();
    this.stdout.write(
      `? ${p.connection.name} wants to run ${p.service}: ${p.summary}\n` +
        (p.resolvedPaths.length ? `  path: ${p.resolvedPaths.join(', ')}\n` : '') +
        `  params: ${JSON.stringify(p.params)}\n` +
        `  allow? [y] once  [s] this session  [a] always  [n] deny  (denied in ${secs} s) › `,
    );
  }

  services(list: ServiceView[]): void {
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
    this.stdout.write(`${text}\n`);
  }

  private err(text: string): void {
    this.closeReply();
    this.stderr.write(`${text}\n`);
  }
}

export function formatAuditLine(r: AuditRecord): string {
  const error = r.outcome === 'ok' ? '' : ` ${r.error ?? ''}${r.message ? `: ${r.message}` : ''}`;
  return `#${r.seq} ${r.ts} ${r.connection} ${r.service} ${r.decision} ${r.outcome}${error} (${r.durationMs} ms) ${JSON.stringify(r.params)}`;
}
