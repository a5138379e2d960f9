import path from 'node:path';
import { LOCAL_CONNECTION, type ConnectionRef } from '../../contract/connection.js';
import { displayPath } from './display.js';

/**
 * Words the file services share in their prompts and answers, so every prompt says the same
 * things the same way: what leaves the computer, and to which server.
 */

/** "to Home server", or "here" for a run the user started in the app (nothing leaves then). */
export function recipient(connection: ConnectionRef): string {
  return connection.id === LOCAL_CONNECTION.id ? 'here' : `to ${connection.name}`;
}

/** The verb of a prompt: data for a server is sent; for the user's own run it is shown. */
export function sendVerb(connection: ConnectionRef): 'Send' | 'Show' {
  return connection.id === LOCAL_CONNECTION.id ? 'Show' : 'Send';
}

/** A folder as a prompt shows it: `notes/` inside the root, or the root as `~/Documents/…`. */
export function folderLabel(entry: { root: string; relative: string }): string {
  return entry.relative === '' ? displayPath(entry.root) : `${entry.relative}${path.sep}`;
}

/** Paths in answers use '/', whatever the platform, so the model can send them back as they are. */
export function modelPath(relative: string): string {
  return relative === '' ? '.' : relative.split(path.sep).join('/');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
