/**
 * The voice bench's ear (voice-latency.ts): an AudioWorklet the bench puts between everything the
 * page plays and the AudioContext's destination. It passes the audio through untouched and posts
 * the render frame where sound starts and where it stops (a run of at least 1 ms of exact
 * silence: what the player writes when it has nothing), so the page can turn those frames into
 * the wall time they reach the output. Served to the page by the bench, transpiled; never part of
 * the app.
 */
interface TapPort {
  postMessage(message: { kind: 'sound' | 'silence'; frame: number }): void;
}

interface TapScope {
  sampleRate: number;
  currentFrame: number;
  AudioWorkletProcessor: new () => { readonly port: TapPort };
  registerProcessor(
    name: string,
    ctor: new () => {
      process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean;
    },
  ): void;
}

const scope = globalThis as unknown as TapScope;
const minSilent = Math.round(scope.sampleRate / 1000);

class OutputTap extends scope.AudioWorkletProcessor {
  private sound = false;
  private silentRun = 0;

  process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const input = inputs[0]?.[0];
    const out = outputs[0]?.[0];
    if (!out) return true;
    if (input) out.set(input);
    else out.fill(0);
    for (let i = 0; i < out.length; i++) {
      if (out[i] !== 0) {
        if (!this.sound) {
          this.sound = true;
          this.port.postMessage({ kind: 'sound', frame: scope.currentFrame + i });
        }
        this.silentRun = 0;
      } else if (this.sound && ++this.silentRun >= minSilent) {
        this.sound = false;
        this.port.postMessage({ kind: 'silence', frame: scope.currentFrame + i + 1 - minSilent });
      }
    }
    return true;
  }
}

scope.registerProcessor('bench-output-tap', OutputTap);

export {};
