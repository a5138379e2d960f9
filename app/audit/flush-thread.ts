/**
 * The audit log's flushes on a quick disk, made on a thread of their own while the event loop
 * polls for the answer instead of sleeping.
 *
 * Why not simply inline (fdatasyncSync on the event loop) or in libuv's thread pool: both put the
 * event loop's thread to sleep for the flush (in the system call, or in epoll until the pool's
 * answer arrives). A CPU with nothing to run goes idle, and waking it costs more than the flush's
 * own time would suggest: on the bench's virtual machine (whose idle driver halts at once, without
 * polling) every halt leaves the guest, and the code after it runs slower on cold caches. Measured
 * in one process, one agent, 1 000 sequential calls a turn: p50 0.37 ms inline, 0.61 ms through
 * the thread pool, 0.25 ms with this thread (the code around the flush costs about what it costs
 * with the log in RAM). Bare-metal CPUs pay a smaller but similar price for leaving deep idle states,
 * which is why kernels poll block devices for quick I/O ("hybrid polling") and idle vCPUs for a
 * moment before halting.
 *
 * So: the flush thread makes the fdatasync, and the event loop keeps turning (setImmediate) while
 * it does, for at most `pollMs`, then waits without spinning (Atomics.waitAsync). The loop is never
 * blocked, unlike an inline flush: sockets, timers and other calls go on during the flush. After
 * each flush the thread watches for the next request for `idleSpinMs` before it sleeps, so a stream
 * of calls does not wake a sleeping thread each time. The CPU this costs is bounded: at most
 * `pollMs` on the event loop per flush and `idleSpinMs` on the thread after it; a voice server's
 * calls seconds apart cost about a millisecond of CPU each. Only a disk whose flushes have proved
 * quick is flushed this way (flush-pace.ts); a slow disk's flushes go to the thread pool, where
 * nothing spins.
 *
 * Durability is unchanged: a flush's promise resolves only when fdatasync has returned. Should the
 * thread fail or end, every flush waiting on it and after it is made in the thread pool instead.
 */
import { fdatasync } from 'node:fs';
import { promisify } from 'node:util';
import { getSystemErrorName } from 'node:util';
import { Worker } from 'node:worker_threads';

const fdatasyncAsync = promisify(fdatasync);

export interface FlushThreadLimits {
  /** How long the event loop polls for a flush's answer before it waits for it asleep (ms). */
  pollMs: number;
  /** How long the thread watches for the next request after a flush before it sleeps (ms). */
  idleSpinMs: number;
}

export const FLUSH_THREAD: FlushThreadLimits = { pollMs: 2, idleSpinMs: 1 };

// The shared words: the state, the descriptor asked for, the answer (0 or a negative errno), and
// whether the thread has started.
const STATE = 0;
const FD = 1;
const RESULT = 2;
const READY = 3;
// The states: nothing asked, a flush asked, a flush done (answer in RESULT), the thread to end.
const IDLE = 0;
const REQUEST = 1;
const DONE = 2;
const STOP = 3;

/** The thread's code, CommonJS as an `eval` worker runs it (no file to find in a bundle or asar). */
const THREAD_SOURCE = `
const { workerData } = require('node:worker_threads');
const { fdatasyncSync } = require('node:fs');
const s = new Int32Array(workerData.shared);
const idleSpinMs = workerData.idleSpinMs;
Atomics.store(s, ${READY}, 1);
for (;;) {
  const since = performance.now();
  let state;
  while ((state = Atomics.load(s, ${STATE})) !== ${REQUEST} && state !== ${STOP}) {
    if (performance.now() - since >= idleSpinMs) Atomics.wait(s, ${STATE}, state);
  }
  if (state === ${STOP}) break;
  let result = 0;
  try {
    fdatasyncSync(s[${FD}]);
  } catch (err) {
    result = typeof err.errno === 'number' && err.errno < 0 ? err.errno : -5;
  }
  s[${RESULT}] = result;
  Atomics.store(s, ${STATE}, ${DONE});
  Atomics.notify(s, ${STATE});
}
`;

/** Atomics.waitAsync, which the ES2023 lib this project compiles against does not declare. */
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

export class FlushThread {
  private readonly words = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
  private worker: Worker | undefined;
  private ended = false;
  /** The flushes queued behind the one the thread is making (one at a time). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly limits: FlushThreadLimits = FLUSH_THREAD) {}

  /** Starts the thread (once). Until it is running, `ready` is false and flushes use the pool. */
  start(): void {
    if (this.worker || this.ended) return;
    if (!waitAsync) {
      this.ended = true;
      return;
    }
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { shared: this.words.buffer, idleSpinMs: this.limits.idleSpinMs },
      // Not the process's flags: a loader (--import) or --input-type=module would apply to this
      // CommonJS code, slow its start or stop it from running at all.
      execArgv: [],
      // Its own small heap: it only ever holds a few numbers.
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
    });
    // It keeps the process alive only while a flush is asked of it (ask): a pending
    // Atomics.waitAsync does not, and a process must not exit before its records are durable.
    worker.unref();
    const end = (): void => {
      this.ended = true;
      // Wakes a flush waiting asleep for an answer that will not come; it then uses the pool.
      Atomics.notify(this.words, STATE);
    };
    worker.on('error', end);
    worker.on('exit', end);
    this.worker = worker;
  }

  /** Whether the thread is running and can take a flush. */
  get ready(): boolean {
    return !this.ended && Atomics.load(this.words, READY) === 1;
  }

  /** Makes `fd`'s data durable (fdatasync); resolves when it is, rejects with the system's error. */
  flush(fd: number): Promise<void> {
    const run = (): Promise<void> => (this.ready ? this.ask(fd) : fdatasyncAsync(fd));
    const done = this.tail.then(run, run);
    this.tail = done.catch(() => undefined);
    return done;
  }

  /** Ends the thread; flushes after this use the pool. */
  stop(): Promise<void> {
    const worker = this.worker;
    this.ended = true;
    if (!worker) return Promise.resolve();
    Atomics.store(this.words, STATE, STOP);
    Atomics.notify(this.words, STATE);
    return new Promise((resolve) => {
      if (worker.threadId === -1) return resolve();
      // Held open until the thread has ended, as a caller awaiting this expects.
      worker.ref();
      worker.once('exit', () => resolve());
    });
  }

  private ask(fd: number): Promise<void> {
    const s = this.words;
    const worker = this.worker as Worker;
    worker.ref();
    s[FD] = fd;
    Atomics.store(s, STATE, REQUEST);
    Atomics.notify(s, STATE);
    const since = performance.now();
    const answered = new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (Atomics.load(s, STATE) === DONE) {
          const result = s[RESULT] as number;
          Atomics.store(s, STATE, IDLE);
          if (result === 0) resolve();
          else reject(systemError(result));
          return;
        }
        if (this.ended) {
          // The thread is gone, perhaps in the middle of this flush: make it again in the pool.
          fdatasyncAsync(fd).then(resolve, reject);
          return;
        }
        if (performance.now() - since < this.limits.pollMs) {
          setImmediate(check);
          return;
        }
        const wait = (waitAsync as WaitAsync)(s, STATE, REQUEST);
        if (wait.async) void wait.value.then(check);
        else check();
      };
      setImmediate(check);
    });
    return answered.finally(() => worker.unref());
  }
}

function systemError(errno: number): NodeJS.ErrnoException {
  let code: string;
  try {
    code = getSystemErrorName(errno);
  } catch {
    code = 'EIO';
  }
  const err: NodeJS.ErrnoException = new Error(`${code}: the disk could not flush the audit log`);
  err.errno = errno;
  err.code = code;
  err.syscall = 'fdatasync';
  return err;
}

let shared: FlushThread | undefined;

/** The process's one flush thread (flushes are made one at a time; one thread serves every log). */
export function flushThread(): FlushThread {
  return (shared ??= new FlushThread());
}
