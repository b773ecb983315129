/** The agent DID: `did:platform:<label>:<keyfp>`, keyfp being the first 16 hex characters of the ed25519 public key. */
export const didPattern = /^did:platform:([^:]+):([0-9a-fA-F]{16})$/;

export interface ParsedDid {
  did: string;
  label: string;
  /** Lowercase UUID when the label is a UUID, else the raw label. */
  owner: string;
  keyFingerprint: string;
}

const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Parses an agent DID; returns undefined when it is malformed (an expected failure, not an exception).
 *
 * @example parseDid('did:platform:8f1c...:0123456789abcdef')?.owner
 */
export function parseDid(did: string): ParsedDid | undefined {
  const match = didPattern.exec(did);
  if (!match) return undefined;
  const label = match[1] as string;
  const keyFingerprint = match[2] as string;
  return { did, label, owner: ownerFromLabel(label), keyFingerprint };
}

/** Owner extraction: a UUID label is lowercased, any other label is kept as it is. */
export function ownerFromLabel(label: string): string {
  return uuidPattern.test(label) ? label.toLowerCase() : label;
}

/** The DID for an owner label and a hex public key. */
export function didFor(label: string, publicKeyHex: string): string {
  return `did:platform:${label}:${publicKeyHex.slice(0, 16)}`;
}

/**
 * The one spelling of a DID that ledgers key accounts by: a UUID label and the key fingerprint in lowercase
 * (both are accepted in either case, and the same agent must never get two accounts).
 *
 * @example canonicalDid('did:platform:ALICE:0123456789ABCDEF') // 'did:platform:ALICE:0123456789abcdef'
 */
export function canonicalDid(parsed: ParsedDid): string {
  return `did:platform:${parsed.owner}:${parsed.keyFingerprint.toLowerCase()}`;
}
