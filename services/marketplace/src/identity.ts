import { type AgentKey, agentKeyFromSeed } from '@platform/client/agent-key';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import type { PrivateKeyAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** Who the marketplace is: an EVM key that signs quotes, receipts and registry transactions, and a DID at settlement. */
export interface MarketplaceIdentity {
  /** secp256k1: EIP-712 quotes and receipts, and the registry's transactions. */
  signer: PrivateKeyAccount;
  /** ed25519: the marketplace's DID, payee of every hold it places and co-signer of vouchers. */
  agent: AgentKey;
  sources: { signer: string; agent: string };
}

/** The DID label of the marketplace's own account at settlement. */
export const marketplaceOwnerLabel = 'marketplace';

/** The configured keys, or in development keys generated once into DATA_DIR (`signing.key`, `agent.key`). */
export function loadIdentity(settings: { signingKeyHex: string; agentKeyHex: string; dataDir: string }): MarketplaceIdentity {
  const signing = secretFromSettingOrFile(settings.signingKeyHex, settings.dataDir, 'signing.key', 'MARKETPLACE_SIGNING_KEY');
  const agent = secretFromSettingOrFile(settings.agentKeyHex, settings.dataDir, 'agent.key', 'MARKETPLACE_AGENT_KEY');
  return {
    signer: privateKeyToAccount(`0x${signing.hex}`),
    agent: agentKeyFromSeed(agent.hex, marketplaceOwnerLabel),
    sources: { signer: signing.source, agent: agent.source },
  };
}
