import { generateAgentKey } from '@platform/client/agent-key';
import type { AgentKey } from '@platform/client/agent-key-type';
import { httpCall } from '../http-call.ts';

/** The headers of a bearer scheme. */
export const bearerHeader = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/**
 * Runs the DID handshake of a service (`POST /v1/agent/auth/challenge` and `/verify`) for a key (a new one by default)
 * and returns the key with its principal token, for the sweep's principal-token scheme.
 *
 * @example const { token } = await handshake(service.url, bearerHeader(transportToken))
 */
export async function handshake(url: string, transport: Record<string, string>, key: AgentKey = generateAgentKey()): Promise<{ key: AgentKey; token: string }> {
  const challenge = await httpCall(url, 'POST', '/v1/agent/auth/challenge', { headers: transport, body: { did: key.did } });
  if (challenge.status !== 200) throw new Error(`challenge failed: ${challenge.text}`);
  const { nonce, message } = challenge.json.data as { nonce: string; message: string };
  const verify = await httpCall(url, 'POST', '/v1/agent/auth/verify', {
    headers: transport,
    body: { did: key.did, public_key: key.publicKeyHex, nonce, signature: key.sign(message) },
  });
  if (verify.status !== 200) throw new Error(`verify failed: ${verify.text}`);
  return { key, token: verify.json.data.token as string };
}
