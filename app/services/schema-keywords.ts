/**
 * JSON Schema keywords whose value maps names to schemas (`properties`, `$defs`…): the names are
 * data, not keywords, so a walk that strips or counts keywords must not take a property called
 * "description" or "pattern" for one. `dependencies` values are schemas or lists of names, both
 * walked as schemas. Shared by the registry's validator key and the MCP import's schema checks.
 */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);
