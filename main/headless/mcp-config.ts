/**
 * `--mcp-config FILE` (repeatable): MCP servers for this run only, read from files in the format
 * users already have (Claude Desktop's `mcpServers`, Cursor's and VS Code's `mcp.json`). Entries
 * that cannot be read are warnings, not a reason to refuse the run; a file that cannot be read at
 * all is an error (the user asked for it by name).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { type ParsedServer, parseServersJson } from '../../app/services/mcp/config.js';
import { MCP_LIMITS } from '../../app/services/mcp/limits.js';

export async function readMcpConfigs(
  files: readonly string[],
): Promise<{ servers: ParsedServer[]; warnings: string[] }> {
  const servers: ParsedServer[] = [];
  const warnings: string[] = [];
  for (const file of files) {
    const full = path.resolve(file);
    const info = await stat(full).catch(() => undefined);
    if (!info?.isFile()) throw new Error(`--mcp-config: there is no file at ${full}`);
    if (info.size > MCP_LIMITS.importFileBytes)
      throw new Error(`--mcp-config: ${full} is larger than ${MCP_LIMITS.importFileBytes} bytes`);
    let parsed: ReturnType<typeof parseServersJson>;
    try {
      parsed = parseServersJson(await readFile(full, 'utf8'));
    } catch (err) {
      throw new Error(`--mcp-config: ${full}: ${(err as Error).message}`);
    }
    for (const problem of parsed.problems) warnings.push(`${full}: ${problem}`);
    for (const server of parsed.servers) {
      if (servers.some((s) => s.name.toLowerCase() === server.name.toLowerCase())) {
        warnings.push(
          `${full}: a server named '${server.name}' was already given; this one is left out`,
        );
        continue;
      }
      servers.push(server);
    }
  }
  return { servers, warnings };
}
