/**
 * A Runner that records every command instead of starting it (what the macOS and Windows command
 * lines are tested with), answering from a script the test gives.
 */
import type { Command } from '../../../app/services/platform/commands.js';
import { type Desktop, systemDesktop } from '../../../app/services/platform/desktop.js';
import { RunError, type RunOutput, type Runner } from '../../../app/services/platform/runner.js';

export interface Recorded extends Command {
  kind: 'run' | 'launch';
}

/** What a scripted command answers: output, or a failure. */
export type Answer = Partial<RunOutput> | RunError;

export class RecordingRunner implements Runner {
  readonly calls: Recorded[] = [];

  constructor(private readonly answer: (c: Recorded) => Answer | undefined = () => undefined) {}

  async run(cmd: string, args: readonly string[], options: { input?: string } = {}) {
    const call: Recorded = {
      kind: 'run',
      cmd,
      args: [...args],
      ...(options.input !== undefined ? { input: options.input } : {}),
    };
    this.calls.push(call);
    const a = this.answer(call);
    if (a instanceof RunError) throw a;
    return { stdout: a?.stdout ?? '', stderr: a?.stderr ?? '' };
  }

  async launch(cmd: string, args: readonly string[]) {
    const call: Recorded = { kind: 'launch', cmd, args: [...args] };
    this.calls.push(call);
    const a = this.answer(call);
    if (a instanceof RunError) throw a;
  }
}

/** A program that is not installed, as the real runner reports it. */
export const notInstalled = (cmd: string) => new RunError('not_found', `${cmd} is not installed`);

/** This machine's desktop with a recorder and the given platform and environment. */
export function recordedDesktop(
  runner: RecordingRunner,
  overrides: Partial<Desktop> = {},
): Desktop {
  return systemDesktop({ runner, env: {}, ...overrides });
}

/** PowerShell's -EncodedCommand back to the script text. */
export function decodePowershell(args: readonly string[]): string {
  const at = args.indexOf('-EncodedCommand');
  return Buffer.from(args[at + 1] ?? '', 'base64').toString('utf16le');
}
