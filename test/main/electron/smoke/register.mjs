// @ts-check
/**
 * Loaded with `node --import` before the built main bundle: `electron` becomes the recording fake
 * for ES imports (a resolve hook) and for CommonJS require() too (electron-log/main requires it),
 * so both get the same module instance, the way Electron's built-in module is one.
 */
import Module, { register } from 'node:module';
import { fileURLToPath } from 'node:url';

const fake = fileURLToPath(new URL('./electron.mjs', import.meta.url));
const resolveFilename = /** @type {any} */ (Module)._resolveFilename;
/** @type {any} */ (Module)._resolveFilename = function (
  /** @type {string} */ request,
  /** @type {unknown[]} */ ...rest
) {
  return request === 'electron' ? fake : resolveFilename.call(this, request, ...rest);
};
register('./hooks.mjs', import.meta.url);
