/**
 * Argument validation at the host boundary (Electron's handle(), the WebSocket bridge). Every
 * command's arguments are checked against its schema before the agent sees them.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { COMMAND_ARGS, type CommandArgs, type CommandName, isCommandName } from './commands.js';

const ajv = new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false });
ajv.addKeyword({
  keyword: 'binary',
  schemaType: 'boolean',
  validate: (_schema: boolean, data: unknown) =>
    data instanceof ArrayBuffer || ArrayBuffer.isView(data),
  errors: false,
});

const compiled = new Map<CommandName, ValidateFunction>();

function validatorOf(name: CommandName): ValidateFunction {
  let v = compiled.get(name);
  if (!v) {
    v = ajv.compile(COMMAND_ARGS[name]);
    compiled.set(name, v);
  }
  return v;
}

export type ArgsCheck<K extends CommandName> =
  { ok: true; args: CommandArgs<K> } | { ok: false; message: string };

/** Check a command name and its arguments; the message names the first problem in plain words. */
export function checkCommand(
  name: unknown,
  args: unknown,
):
  | { ok: true; name: CommandName; args: unknown[] }
  | { ok: false; code: 'unknown_command' | 'invalid_args'; message: string } {
  if (!isCommandName(name))
    return {
      ok: false,
      code: 'unknown_command',
      // Never the value itself: it is the caller's, of any size or depth.
      message: `unknown command ${typeof name === 'string' ? JSON.stringify(name.slice(0, 64)) : `(a ${typeof name})`}`,
    };
  if (!Array.isArray(args))
    return { ok: false, code: 'invalid_args', message: `${name}: arguments must be a list` };
  const validate = validatorOf(name);
  if (validate(args)) return { ok: true, name, args };
  const err = validate.errors?.[0];
  const where = err?.instancePath ? ` at ${err.instancePath}` : '';
  return {
    ok: false,
    code: 'invalid_args',
    message: `${name}: invalid arguments${where}: ${err?.message ?? 'rejected'}`,
  };
}
