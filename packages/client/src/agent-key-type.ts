// The shape alone, with no Node module behind it: the service clients' types reach the console's (browser) code.

/** An agent's identity: a 32-byte ed25519 seed (64 hex) and the DID it yields. */
export interface AgentKey {
  readonly seedHex: string;
  readonly publicKeyHex: string;
  readonly did: string;
  sign(message: string): string;
}
