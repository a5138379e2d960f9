/**
 * JSON Schema keywords that only annotate. Our validators (no defaults applied, no `$comment`
 * callback) ignore them: schemas differing only in them can share a validator (the registry's
 * key), and they add nothing to what a check costs (the MCP import's budget).
 */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title',
  'description',
  'examples',
  '$comment',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/**
 * JSON Schema keywords whose value maps names to schemas (`properties`, `$defs`…): the names are
 * data, not keywords, so a walk that strips or counts keywords must not take a property called
 * "description" or "pattern" for one. `dependencies` values are schemas or lists of names, both
 * walked as schemas.
 */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);
