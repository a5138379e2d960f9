import { ServiceFailure } from '../service.js';
import type { Command } from './commands.js';
import { RunError, type RunOptions, type RunOutput, type Runner } from './runner.js';

/**
 * Run the first of `commands` that is installed (Linux offers several tools for one job). Only a
 * missing program moves on to the next; a program that ran and failed is the answer. None
 * installed is `unsupported`, naming what would make it work.
 */
export async function runFirst(
  runner: Runner,
  commands: readonly Command[],
  what: string,
  options: Omit<RunOptions, 'input'> = {},
): Promise<{ command: Command; output: RunOutput }> {
  if (commands.length === 0)
    throw new ServiceFailure('unsupported', `${what} is not possible on this computer`);
  for (const command of commands) {
    try {
      const output = await runner.run(command.cmd, command.args, {
        ...options,
        ...(command.input !== undefined ? { input: command.input } : {}),
      });
      return { command, output };
    } catch (err) {
      if (err instanceof RunError && err.reason === 'not_found') continue;
      throw asFailure(err, what);
    }
  }
  throw new ServiceFailure(
    'unsupported',
    `${what} is not possible on this computer: none of ${unique(commands).join(', ')} is installed`,
  );
}

/** A RunError as the refusal the model reads; anything else is left to the gate. */
export function asFailure(err: unknown, what: string): unknown {
  if (!(err instanceof RunError)) return err;
  if (err.reason === 'not_found')
    return new ServiceFailure(
      'unsupported',
      `${what} is not possible on this computer: ${err.message}`,
    );
  if (err.reason === 'timeout')
    return new ServiceFailure('service_error', `${what} failed: ${err.message}`);
  return new ServiceFailure('service_error', `${what} failed: ${err.message}`);
}

function unique(commands: readonly Command[]): string[] {
  return [...new Set(commands.map((c) => c.cmd))];
}
