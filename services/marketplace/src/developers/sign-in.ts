import { type Hex, verifyMessage, zeroAddress } from 'viem';
import { createSiweMessage, parseSiweMessage } from 'viem/siwe';

/**
 * Sign-In with Ethereum (EIP-4361) for developers. The marketplace hands out a nonce; the wallet signs a message
 * naming this marketplace's domain, the registry's chain id and that nonce; the signature is checked here (viem's
 * parser, EIP-191 recovery of an externally owned account) and the nonce consumed by the caller, last.
 */
export interface SignInSettings {
  /** `MARKETPLACE_SIWE_DOMAIN`: the authority every message must name. */
  domain: string;
  /** The platform chain id (MARKETPLACE_EIP712_CHAIN_ID, the one quotes and receipts name): known without asking a node. */
  chainId: number;
}

export const signInNonceLifetimeSeconds = 300;
/** How far `Issued At` may lie in the past (the nonce's lifetime) and in the future (clock skew). */
const issuedAtPastSeconds = signInNonceLifetimeSeconds;
const issuedAtFutureSeconds = 60;
export const signInStatement = 'Sign in to the marketplace to manage your service listings.';
/** The stand-in for the signer's address in `message_template`. */
export const addressPlaceholder = '{address}';

/** The URI sign-in messages name: http for a loopback domain (development), https otherwise. */
export function signInUri(domain: string): string {
  const host = domain.replace(/:\d+$/, '');
  const local = host === 'localhost' || host.endsWith('.localhost') || host === '127.0.0.1' || host === '[::1]';
  return `${local ? 'http' : 'https'}://${domain}`;
}

/** The message a wallet signs, with `{address}` for the signer to fill in (issued now, no expiration). */
export function signInTemplate(settings: SignInSettings, nonce: string, issuedAt: Date): string {
  const message = createSiweMessage({
    address: zeroAddress,
    chainId: settings.chainId,
    domain: settings.domain,
    nonce,
    uri: signInUri(settings.domain),
    version: '1',
    statement: signInStatement,
    issuedAt,
  });
  return message.replace(zeroAddress, addressPlaceholder);
}

export type SignInCheck = { ok: true; address: Hex; nonce: string; expiresAt?: Date } | { ok: false; reason: string; malformed?: true };

const refuse = (reason: string): SignInCheck => ({ ok: false, reason });
const malformed = (reason: string): SignInCheck => ({ ok: false, reason: `message is not a valid EIP-4361 sign-in message: ${reason}`, malformed: true });
const invalidTime = (date: Date | undefined) => date !== undefined && Number.isNaN(date.getTime());

/** Everything but the nonce's consumption: shape, domain, chain, times, then the signature. */
export async function checkSignIn(message: string, signature: string, settings: SignInSettings, now: Date): Promise<SignInCheck> {
  const parsed = parseSiweMessage(message);
  for (const field of ['domain', 'address', 'uri', 'version', 'chainId', 'nonce', 'issuedAt'] as const)
    if (parsed[field] === undefined) return malformed(`no ${field}`);
  if (invalidTime(parsed.issuedAt) || invalidTime(parsed.expirationTime) || invalidTime(parsed.notBefore))
    return malformed('times must be RFC 3339, such as 2026-03-01T12:00:00.000Z');
  if (parsed.domain !== settings.domain) return refuse(`the message signs in to ${parsed.domain}; this marketplace is ${settings.domain}`);
  if (parsed.version !== '1') return refuse(`version must be 1, got ${parsed.version}`);
  if (parsed.chainId !== settings.chainId) return refuse(`the message names chain ${parsed.chainId}; sign in with chain id ${settings.chainId}`);
  const nowMs = now.getTime();
  const issuedAt = (parsed.issuedAt as Date).getTime();
  if (issuedAt < nowMs - issuedAtPastSeconds * 1000) return refuse(`Issued At is more than ${issuedAtPastSeconds} s old; start again with a new nonce`);
  if (issuedAt > nowMs + issuedAtFutureSeconds * 1000) return refuse(`Issued At is more than ${issuedAtFutureSeconds} s in the future; check the clock`);
  if (parsed.expirationTime && parsed.expirationTime.getTime() <= nowMs) return refuse('the message has expired (Expiration Time)');
  if (parsed.notBefore && parsed.notBefore.getTime() > nowMs) return refuse('the message is not valid yet (Not Before)');
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return refuse('signature must be 0x followed by 65 bytes of hex (personal_sign)');
  const address = parsed.address as Hex;
  const valid = await verifyMessage({ address, message, signature: signature as Hex }).catch(() => false);
  if (!valid) return refuse(`the signature was not made by ${address}`);
  return { ok: true, address, nonce: parsed.nonce as string, ...(parsed.expirationTime ? { expiresAt: parsed.expirationTime } : {}) };
}
