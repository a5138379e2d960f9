/** What Electron's preload puts on the window (main/electron/preload): only the contract's names. */
interface AgentPreload {
  invoke(method: string, ...args: unknown[]): Promise<unknown>;
  on(event: string, cb: (payload: unknown) => void): () => void;
  /** Electron only: the OS folder picker; undefined when the user cancels. */
  pickFolder?(): Promise<string | null | undefined>;
  /** Electron only: register the global push-to-talk shortcut (null: off); rejects with why not. */
  setShortcut?(accelerator: string | null): Promise<string | null | undefined>;
  /** Electron only: each press of the global shortcut (key-down only, so a toggle). */
  onShortcut?(cb: () => void): () => void;
  /** Electron only: ask the system for the microphone (macOS); false when refused. */
  askMicrophone?(): Promise<boolean>;
}

interface Window {
  agent?: AgentPreload;
}

/** Vite: a module bundled as a separate same-origin script; the import is its URL. */
declare module '*?worker&url' {
  const url: string;
  export default url;
}

/** Vite: a module bundled as a same-origin worker script; the import is its constructor. */
declare module '*?worker' {
  const WorkerConstructor: new (options?: { name?: string }) => Worker;
  export default WorkerConstructor;
}
