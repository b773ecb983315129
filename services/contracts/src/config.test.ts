import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '@platform/kit/config';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  test('defaults: port 9095, local chain on 8545 with anvil, 1 ETH per transaction, 10 ETH a day', () => {
    const config = loadConfig({});
    assert.equal(config.port, 9095);
    assert.equal(config.transportToken, '');
    assert.equal(config.chains.localRpcUrl, 'http://127.0.0.1:8545');
    assert.equal(config.chains.localNode, 'anvil');
    assert.equal(config.chains.mainnetRpcUrl, '');
    assert.equal(config.policy.spendCapWei, 10n ** 18n);
    assert.equal(config.policy.dailyCapWei, 10n ** 19n);
    assert.deepEqual(config.policy.allowedChains, ['local', 'primary-mainnet']);
  });

  test('production needs the bearer and the wallet key, unless CONTRACTS_DEV', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /PLATFORM_CONTRACT_TOKEN is required/);
    assert.throws(() => loadConfig({ NODE_ENV: 'production', PLATFORM_CONTRACT_TOKEN: 't' }), /CONTRACTS_WALLET_KEY is required/);
    assert.equal(loadConfig({ NODE_ENV: 'production', PLATFORM_CONTRACT_TOKEN: 't', CONTRACTS_WALLET_KEY: 'ab'.repeat(32) }).walletKeyHex, 'ab'.repeat(32));
    assert.equal(loadConfig({ NODE_ENV: 'production', CONTRACTS_DEV: 'true' }).dev, true);
  });

  test('bad values stop the start with a message naming the setting', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ CONTRACTS_WALLET_KEY: 'abc' }, /CONTRACTS_WALLET_KEY must be 64 hex/],
      [{ CONTRACTS_SPEND_CAP_WEI: '1.5' }, /CONTRACTS_SPEND_CAP_WEI must be a whole number of wei/],
      [{ CONTRACTS_ALLOWED_CHAINS: 'local, Main Net' }, /CONTRACTS_ALLOWED_CHAINS/],
      [{ CONTRACTS_LOCAL_NODE: 'ganache' }, /CONTRACTS_LOCAL_NODE must be anvil or external/],
      [{ CONTRACTS_MAINNET_RPC_URL: 'ws://x' }, /CONTRACTS_MAINNET_RPC_URL must use/],
      [{ CONTRACTS_FUZZ_RUNS: '0' }, /CONTRACTS_FUZZ_RUNS/],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        JSON.stringify(env),
      );
    }
    assert.equal(loadConfig({ CONTRACTS_ALLOWED_CHAINS: '*' }).policy.allowedChains, '*');
  });
});
