/** What the vault holds for one connection. Never leaves the service: no route returns it, no log prints it. */
export interface Credential {
  accessToken: string;
  refreshToken: string;
  /** When the access token stops working. */
  expiresAt: Date;
}

/** The plaintext sealed for a credential: compact JSON with the OAuth field names. */
export function encodeCredential(credential: Credential): Buffer {
  return Buffer.from(
    JSON.stringify({ access_token: credential.accessToken, refresh_token: credential.refreshToken, expires_at: credential.expiresAt.toISOString() }),
    'utf8',
  );
}

/** The credential from unsealed bytes; a shape error names no value, since the values are secrets. */
export function decodeCredential(plaintext: Buffer): Credential {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(plaintext.toString('utf8')) as Record<string, unknown>;
  } catch {
    // Not rethrown as is: V8's JSON error quotes the text around the fault, which would be token bytes.
    throw new Error('unsealed credential is not JSON');
  }
  const { access_token: accessToken, refresh_token: refreshToken, expires_at: expiresAt } = parsed;
  if (typeof accessToken !== 'string' || typeof refreshToken !== 'string' || typeof expiresAt !== 'string') {
    throw new Error('unsealed credential lacks access_token, refresh_token or expires_at');
  }
  return { accessToken, refreshToken, expiresAt: new Date(expiresAt) };
}
