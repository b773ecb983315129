import { ServiceError } from '@platform/kit/errors';
import type { Address, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { WalletRow } from '../db/schema.ts';
import type { KeyVault } from './key-vault.ts';
import type { WalletsRepository } from './wallets.repository.ts';

/** A caller's wallet, opened for signing. The account never leaves the engine: views carry the address only. */
export interface OpenWallet {
  did: string;
  address: Address;
  account: LocalAccount;
  created: boolean;
}

/** The embedded wallet: one EVM key per agent DID, made on first use and stored sealed. */
export class Wallets {
  readonly #repository: WalletsRepository;
  readonly #vault: KeyVault;

  constructor(options: { repository: WalletsRepository; vault: KeyVault }) {
    this.#repository = options.repository;
    this.#vault = options.vault;
  }

  get repository(): WalletsRepository {
    return this.#repository;
  }

  /** The caller's wallet, created now if this is its first use. */
  async open(did: string): Promise<OpenWallet> {
    const existing = await this.#repository.find(did);
    if (existing) return { ...this.#unseal(existing), created: false };
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    const stored = await this.#repository.insertIfAbsent({ did, address, sealed_key: this.#vault.seal(privateKey, did), key_id: this.#vault.keyId });
    return { ...this.#unseal(stored), created: stored.address === address };
  }

  /** The caller's address if it has a wallet yet; reads never create one. */
  async addressOf(did: string): Promise<Address | undefined> {
    return (await this.#repository.find(did))?.address as Address | undefined;
  }

  #unseal(row: WalletRow): Omit<OpenWallet, 'created'> {
    if (row.key_id !== this.#vault.keyId) {
      throw new ServiceError('internal', 'wallet is sealed under another wallet key', { details: { reason: 'wallet_key_mismatch' } });
    }
    const account = privateKeyToAccount(this.#vault.open(row.sealed_key, row.did));
    return { did: row.did, address: account.address, account };
  }
}
