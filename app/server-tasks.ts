/**
 * Which of a connection's tasks (a reply, its thoughts, mood and transcript) reach the
 * conversation. Each new task becomes an item in every window, a block in the terminal and lines
 * in the log, and a server chooses its task ids: one starting replies on made-up tasks as fast as
 * its socket goes would bury the conversation (and push the user's own turns out of it). A new
 * task takes a turn of a pace that leaves a conversation untouched (a turn brings one reply); past
 * it the task is not shown, and nothing of it later is either, so no window sees half a reply.
 */
import { CallPace, type CallPaceLimits } from './call-pace.js';
import type { Clock } from './clock.js';

/** Twenty replies at once, then five a second: a person's turns never come near it. */
export const SERVER_TASK_PACE: CallPaceLimits = { burst: 20, perSecond: 5 };

/** Tasks whose verdict is remembered (each a short key); the oldest is forgotten first. */
const REMEMBERED = 1024;

export class ServerTasks {
  private readonly pace: CallPace;
  /** `connection \0 task` → shown or not, in first-seen order. */
  private readonly verdicts = new Map<string, boolean>();

  constructor(
    clock: Pick<Clock, 'now'>,
    readonly limits: CallPaceLimits = SERVER_TASK_PACE,
    private readonly remembered = REMEMBERED,
  ) {
    this.pace = new CallPace(clock, limits);
  }

  /**
   * Whether events of `taskId` on `connection` are shown. A task seen before keeps its verdict; a
   * new one takes a turn if one is free. `startsStreak`: the first task of a streak not shown.
   */
  admit(connection: string, taskId: string): { admitted: boolean; startsStreak: boolean } {
    const key = `${connection}\u0000${taskId}`;
    const known = this.verdicts.get(key);
    if (known !== undefined) return { admitted: known, startsStreak: false };
    const turn = this.pace.admit(connection);
    this.verdicts.set(key, turn.admitted);
    if (this.verdicts.size > this.remembered)
      this.verdicts.delete(this.verdicts.keys().next().value!);
    return turn;
  }

  /** Tasks remembered (for the bound's test). */
  get size(): number {
    return this.verdicts.size;
  }
}
