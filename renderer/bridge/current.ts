/**
 * The bridge the app runs on, set once at start. Stores reach it through here so they stay free
 * of DOM code (and testable under Node with a fake).
 */
import type { Bridge } from './types.js';

let current: Bridge | undefined;

export function setBridge(bridge: Bridge | undefined): void {
  current = bridge;
}

export function bridge(): Bridge {
  if (!current) throw new Error('the bridge is not started yet');
  return current;
}
