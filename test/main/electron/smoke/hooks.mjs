// @ts-check
/**
 * Module-resolution hook (node:module `register`): `import 'electron'` resolves to the recording
 * fake beside this file, as Electron resolves it to its built-in module. Everything else resolves
 * as Node would.
 */
const FAKE = new URL('./electron.mjs', import.meta.url).href;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: FAKE, shortCircuit: true };
  return next(specifier, context);
}
