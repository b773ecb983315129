import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAnvil } from '@platform/kit/chain/anvil';
import { freePort } from '@platform/kit/free-port';
import { silentLogger } from '@platform/testkit/databases';
import { startTestChain } from '@platform/testkit/test-chain';
import { createPublicClient, http } from 'viem';
import { chainMarkerFile, ensureLocalChain } from '../src/chains/local-chain.ts';
import type { ChainSettings } from '../src/config.ts';

/*
 * The local chain's ownership: the deployments remembered in a data folder are on one chain, recorded by its genesis
 * hash; a node on the port that is another chain (not the one this platform started) is refused, naming the setting.
 */

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function dataFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'local-chain-'));
  folders.push(folder);
  return folder;
}

async function settings(): Promise<ChainSettings> {
  return {
    mainnetRpcUrl: 'http://127.0.0.1:1',
    localRpcUrl: `http://127.0.0.1:${await freePort()}`,
    localChainId: 31337,
    localNode: 'anvil',
    anvilPath: undefined,
    localFundingWei: 10n ** 20n,
    rpcTimeoutMs: 5_000,
    receiptTimeoutMs: 30_000,
  };
}

const genesis = async (url: string) => (await createPublicClient({ transport: http(url) }).getBlock({ blockNumber: 0n })).hash;

test('the node it starts is recorded, and the same node restarted from its state is accepted', async () => {
  const chain = await settings();
  const dataDir = dataFolder();
  const first = await ensureLocalChain(chain, dataDir, silentLogger);
  const started = await genesis(chain.localRpcUrl);
  await first.stop();
  assert.equal(existsSync(join(dataDir, chainMarkerFile)), true);
  const again = await ensureLocalChain(chain, dataDir, silentLogger);
  try {
    assert.equal(again.rpcUrl, chain.localRpcUrl);
    assert.equal(await genesis(chain.localRpcUrl), started, 'the same chain, restarted from its state file');
  } finally {
    await again.stop();
  }
});

test('another node answering on the port where this data’s chain was: refused with one line naming CONTRACTS_LOCAL_RPC_URL', async () => {
  const chain = await settings();
  const dataDir = dataFolder();
  await (await ensureLocalChain(chain, dataDir, silentLogger)).stop();
  // Someone else's anvil, on the same port and chain id: a new genesis, none of the remembered deployments.
  const other = await startAnvil({ host: '127.0.0.1', port: Number(new URL(chain.localRpcUrl).port), chainId: 31337, logger: silentLogger });
  try {
    await assert.rejects(ensureLocalChain(chain, dataDir, silentLogger), (error: Error) => {
      assert.equal(error.name, 'ConfigError');
      assert.equal(error.message.split('\n').length, 1);
      assert.match(
        error.message,
        /^CONTRACTS_LOCAL_RPC_URL: http:\/\/127\.0\.0\.1:\d+ is served by a node this platform did not start \(chain 31337, genesis 0x/,
      );
      assert.match(error.message, /set CONTRACTS_LOCAL_RPC_URL to a free port/);
      return true;
    });
  } finally {
    await other.stop();
  }
});

test('a node already answering for a fresh data folder is used, and recorded as its chain', async () => {
  const node = await startTestChain();
  try {
    const chain = { ...(await settings()), localRpcUrl: node.url };
    const dataDir = dataFolder();
    const used = await ensureLocalChain(chain, dataDir, silentLogger);
    assert.equal(used.rpcUrl, node.url);
    await used.stop();
    assert.equal(await node.rpc<boolean>('web3_clientVersion').then(Boolean), true, 'a node it did not start is not stopped');
    const again = await ensureLocalChain(chain, dataDir, silentLogger);
    assert.equal(again.rpcUrl, node.url, 'the same node again: accepted');
  } finally {
    await node.stop();
  }
});
