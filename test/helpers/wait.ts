import type { Emitter } from '../../app/events.js';

/** Resolve with the first event matching `pred`; reject with a clear message after `timeoutMs`. */
export function nextEvent<E extends Record<string, unknown>, K extends keyof E>(
  emitter: Emitter<E>,
  name: K,
  pred: (payload: E[K]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<E[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no '${String(name)}' event matched within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = emitter.on(name, (payload) => {
      if (!pred(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/** Poll until `check` is true. */
export async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A JWT-shaped token with the given claims (unsigned: the agent only reads `exp`). */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}
