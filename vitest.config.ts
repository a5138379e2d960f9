import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules', 'dist', 'test/bench/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Wire tests open real sockets; keep each file in its own worker so a leak shows up as a hang.
    pool: 'forks',
  },
});
