/**
 * Keeping Node alive on purpose. The system clock unrefs every timer (a forgotten timer must
 * never hold the process), and sockets are what normally keep it running. Between two sockets —
 * a link waiting to dial again — nothing would, and a terminal `run --no-chat` exited (code 13,
 * its top-level await unsettled) one second after the server dropped it. So a running link holds
 * the process explicitly until it is stopped or gives up.
 */
import { type Disposable, toDisposable } from '../../lifecycle.js';

/** A referenced handle that never does anything; disposing it lets the process end again. */
export function holdProcess(): Disposable {
  const handle = setInterval(() => undefined, 2 ** 30);
  return toDisposable(() => clearInterval(handle));
}
