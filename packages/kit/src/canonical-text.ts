import canonicalize from 'canonicalize';

/**
 * A record of strings, finite numbers, booleans, nulls and nested records written directly: the same bytes the
 * library writes (keys sorted by UTF-16 code unit, JSON.stringify's string and number forms, which RFC 8785 adopts)
 * at a fraction of its cost, since receipts, intents and idempotency hashes are all of this shape and sit on the
 * ledger's hot path. Anything else (arrays, undefined, toJSON, lone surrogates, NaN) is undefined here and left to
 * the library, which writes, drops or refuses it as before.
 */
function recordCanonicalJson(value: object, depth = 0): string | undefined {
  const prototype = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || depth > 8) return undefined;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const member = record[key];
    let written: string | undefined;
    if (typeof member === 'string') written = member.isWellFormed() ? JSON.stringify(member) : undefined;
    else if (typeof member === 'number') written = Number.isFinite(member) ? JSON.stringify(member) : undefined;
    else if (member === null) written = 'null';
    else if (typeof member === 'boolean') written = member ? 'true' : 'false';
    else if (typeof member === 'object' && !Array.isArray(member) && typeof (member as { toJSON?: unknown }).toJSON !== 'function')
      written = recordCanonicalJson(member, depth + 1);
    if (written === undefined || !key.isWellFormed()) return undefined;
    text += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${written}`;
  }
  return `${text}}`;
}

/**
 * RFC 8785 canonical JSON: the same bytes for the same value in any language. No Node module, so browsers use it too
 * (canonical-json.ts adds the node:crypto hash).
 */
export function canonicalJson(value: unknown): string {
  const text = (typeof value === 'object' && value !== null && !Array.isArray(value) ? recordCanonicalJson(value) : undefined) ?? canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalised');
  return text;
}
