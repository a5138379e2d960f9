/**
 * Runs inside an Electron utility process (see mcp-launcher.ts): gives a JavaScript MCP server
 * the `process.stdin` a utility process lacks, fed by the messages the launcher posts, and the
 * `process.argv` it would have had under Node; then loads the server. Its stdout and stderr are
 * the utility process's own, piped to the agent.
 */
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';

interface ParentPort {
  on(event: 'message', listener: (e: { data: unknown }) => void): void;
}

const MARK = '--advent-mcp-script';
const at = process.argv.indexOf(MARK);
const script = at >= 0 ? process.argv[at + 1] : undefined;
if (!script) {
  process.stderr.write('mcp-stdio-shim: no script to run\n');
  process.exit(2);
}

const input = new PassThrough();
Object.defineProperty(process, 'stdin', { value: input, configurable: true });
const port = (process as unknown as { parentPort: ParentPort }).parentPort;
port.on('message', ({ data }) => {
  const message = data as { stdin?: unknown; end?: unknown } | null;
  if (typeof message?.stdin === 'string') input.write(message.stdin);
  else if (message?.end === true) input.end();
});
// A server reading argv.slice(2) (the filesystem server's folders) sees its own arguments.
process.argv = [process.argv[0]!, script, ...process.argv.slice(at + 2)];
await import(pathToFileURL(script).href);
