// Preloaded into a child agent by the hostile wire suite (`node --import`): every timer of the
// process runs ADVENT_TEST_TIME_SCALE times faster, so five reconnect backoffs (1 + 2 + 4 + 8 + 16
// s) fit a test's time budget. Only the waiting is shortened; what runs is the real agent.
const scale = Number(process.env.ADVENT_TEST_TIME_SCALE ?? '1');
if (Number.isFinite(scale) && scale > 1) {
  const { setTimeout: realTimeout, setInterval: realInterval } = globalThis;
  const faster = (ms) => (typeof ms === 'number' && ms > 0 ? ms / scale : ms);
  globalThis.setTimeout = (fn, ms, ...args) => realTimeout(fn, faster(ms), ...args);
  globalThis.setInterval = (fn, ms, ...args) => realInterval(fn, faster(ms), ...args);
}
