import canonicalize from 'canonicalize';

/**
 * RFC 8785 canonical JSON: the same bytes for the same value in any language. No Node module, so browsers use it too
 * (canonical-json.ts adds the node:crypto hash).
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalised');
  return text;
}
