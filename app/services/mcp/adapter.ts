/**
 * An imported tool as a Service (DESIGN §3): named `<server>_<tool>`, its title and description
 * from the tool, its input schema validated by the registry like any other, its result turned into
 * text for the voice servers. Its risk only labels it: whether it asks is the policy the hub
 * computes (every imported tool asks unless its server is trusted and it claims to only read).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { McpToolHint } from '../../contract/mcp.js';
import type { Risk } from '../../contract/policy.js';
import { type ParamSchema, type Service, ServiceFailure } from '../service.js';
import type { StructuredResult } from '../content.js';
import { MCP_LIMITS, nodesWithin } from './limits.js';
import { resultText } from './result.js';
import { type ListedTool, checkNodes, validationSchema } from './tools.js';

export interface ToolCaller {
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

export interface ToolServiceOptions {
  name: string;
  server: { id: string; name: string; trusted: boolean };
  tool: ListedTool;
  timeoutMs: number;
  caller: ToolCaller;
}

/** Trusted claims of only reading are the one thing that lets an imported tool run unasked. */
export function autoAllowed(hint: McpToolHint, trusted: boolean): boolean {
  return trusted && hint.readOnly === true && hint.destructive !== true;
}

/** A label for the Services page; asking or not is decided by the policy, not by this. */
export function riskOf(hint: McpToolHint, trusted: boolean): Risk {
  if (autoAllowed(hint, trusted)) return 'read';
  if (hint.destructive === true) return 'system';
  return 'write';
}

export function toolService(options: ToolServiceOptions): Service {
  const { tool, server, caller, name } = options;
  // Its own validator, compiled on the first structured result and gone with the service: a
  // shared one would keep the validator of every version of every tool a server ever listed.
  let outputCheck: { ajv: Ajv; validate: ValidateFunction } | null | undefined;
  // The output schema's parts (checkNodes, at most MCP_LIMITS.schemaCheckNodes), counted once.
  let schemaNodes: number | undefined;
  /**
   * Whether checking this result stays within MCP_LIMITS.outputCheckSteps: the result's values ×
   * the schema's parts bounds the validator's work, and the validator runs on the event loop,
   * where no timeout can stop it (a 9 KB result took 16 s against a schema that fans out).
   */
  const checkable = (structured: Record<string, unknown>): boolean => {
    if (!tool.outputSchema) return true;
    schemaNodes ??= Math.max(1, checkNodes(tool.outputSchema, MCP_LIMITS.schemaCheckNodes));
    const budget = Math.floor(MCP_LIMITS.outputCheckSteps / schemaNodes);
    return nodesWithin(structured, budget) <= budget;
  };
  /** Why the result does not match the tool's output schema, or nothing (it does, or none). */
  const checkOutput = (structured: Record<string, unknown>): string | undefined => {
    if (!tool.outputSchema) return undefined;
    if (outputCheck === undefined) {
      try {
        const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
        outputCheck = { ajv, validate: ajv.compile(validationSchema(tool.outputSchema)) };
      } catch {
        // A schema our validator cannot compile is the server's problem, not a reason to fail calls.
        outputCheck = null;
      }
    }
    if (!outputCheck || outputCheck.validate(structured)) return undefined;
    return outputCheck.ajv.errorsText(outputCheck.validate.errors, {
      dataVar: 'structuredContent',
    });
  };
  return {
    name,
    title: tool.title,
    description: tool.description,
    summary: tool.title,
    group: 'other',
    // Checked against the schema the model is shown (inlined, bounded): no `$ref` left to fan out.
    parameters: validationSchema(tool.shownSchema) as ParamSchema,
    serverParameters: tool.shownSchema as ParamSchema,
    risk: riskOf(tool.hint, server.trusted),
    timeoutMs: options.timeoutMs,
    server: { id: server.id, name: server.name, tool: tool.name },
    hint: tool.hint,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    preview: () => ({
      summary: `Run "${tool.title}" of the MCP server "${server.name}"`,
      resolvedPaths: [],
    }),
    async run(params, ctx) {
      let raw: unknown;
      try {
        raw = await caller.call(tool.name, params, ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw new ServiceFailure('cancelled', `'${name}' was stopped`);
        throw new ServiceFailure(
          'service_error',
          `'${name}' failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const result = resultText(raw);
      if (result.isError)
        throw new ServiceFailure('service_error', `'${name}' failed: ${result.text}`);
      // A structure that cannot be checked (its schema left out at listing as too costly, or this
      // result too large to check against it) goes on as text only, like an unbounded one.
      if (
        result.structuredContent &&
        !tool.outputUnchecked &&
        checkable(result.structuredContent)
      ) {
        const wrong = checkOutput(result.structuredContent);
        if (wrong)
          throw new ServiceFailure(
            'service_error',
            `'${name}' returned a result that does not match its own output schema (${wrong})`,
          );
        // An MCP client of ours can take the structure the tool declared (voice servers: text).
        if (ctx.dialect === 'mcp')
          return {
            kind: 'structured-result',
            text: result.text,
            structured: result.structuredContent,
          } satisfies StructuredResult;
      }
      return result.text;
    },
  };
}
