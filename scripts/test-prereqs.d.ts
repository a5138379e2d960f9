/** Types of scripts/test-prereqs.js, for its test. */
export declare const CHROMIUM_PATHS: readonly string[];
export declare function nodeSupported(version: string): boolean;
export declare function findChromium(
  env?: Record<string, string | undefined>,
  exists?: (path: string) => boolean,
): { path: string; problem?: undefined } | { path?: undefined; problem: string };
