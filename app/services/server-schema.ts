/**
 * A service's parameters as voice servers are shown them. Their backends hand the schema to an
 * LLM's function calling, which knows plain types only: `["string", "null"]` (how schema
 * generators write an optional value) becomes `"string"` — leaving the property out already means
 * "no value". Calls are still validated against the service's own schema. The Advent dialect
 * further keeps only the keywords its server documents (wire/advent/messages.ts).
 */
export function plainTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainTypes);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      out[key] = types.length === 1 ? types[0] : types.length ? types : value;
    } else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') {
      out[key] = value;
    } else {
      out[key] = plainTypes(value);
    }
  }
  return out;
}
