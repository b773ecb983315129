import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { anvilBinary, startAnvil } from '@platform/kit/chain/anvil';
import { freePort } from '@platform/kit/free-port';
import { silentLogger } from '@platform/testkit/databases';
import { startTestChain } from '@platform/testkit/test-chain';
import { createPublicClient, http } from 'viem';
import { chainMarkerFile, ensureLocalChain, LocalChainError } from '../src/chains/local-chain.ts';
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
    localNodeStartTimeoutMs: 60_000,
    localChainRequired: false,
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

/**
 * A stand-in for the anvil binary (CONTRACTS_ANVIL_PATH) that says "Listening" as anvil does, then: `slow`, holds the
 * first connection unanswered (as a busy machine's node does) and hands the port to the real anvil; `mute`, holds every
 * connection; `exits`, exits with code 3. SIGTERM ends it and its anvil.
 */
function fakeAnvil(mode: 'slow' | 'mute' | 'exits'): string {
  const file = join(dataFolder(), `anvil-${mode}.cjs`);
  writeFileSync(
    file,
    `#!${process.execPath}
const { createServer } = require('node:net');
const { spawn } = require('node:child_process');
const args = process.argv.slice(2);
const [host, port] = [args[args.indexOf('--host') + 1], Number(args[args.indexOf('--port') + 1])];
const mode = ${JSON.stringify(mode)};
let anvil;
const held = [];
process.on('SIGTERM', () => (anvil ? anvil.kill('SIGTERM') : process.exit(0)));
if (mode === 'exits') {
  console.log('Listening on ' + host + ':' + port);
  process.exit(3);
}
const server = createServer((socket) => {
  held.push(socket);
  if (mode !== 'slow' || anvil) return;
  // The listening socket closes at once (the held connection stays open), so anvil can take the port.
  server.close();
  anvil = spawn(${JSON.stringify(anvilBinary())}, args, { stdio: 'ignore' });
  anvil.once('exit', () => process.exit(0));
});
server.listen(port, host, () => console.log('Listening on ' + host + ':' + port));
`,
  );
  chmodSync(file, 0o755);
  return file;
}

test('a node slow to answer its first request is waited for, recorded and used (the chain was dropped while anvil ran)', async () => {
  const chain = { ...(await settings()), anvilPath: fakeAnvil('slow'), rpcTimeoutMs: 500, localChainRequired: true };
  const dataDir = dataFolder();
  const local = await ensureLocalChain(chain, dataDir, silentLogger);
  try {
    assert.equal(local.rpcUrl, chain.localRpcUrl);
    assert.equal(await createPublicClient({ transport: http(chain.localRpcUrl) }).getChainId(), 31337);
    const recorded = JSON.parse(readFileSync(join(dataDir, chainMarkerFile), 'utf8')) as { genesis_hash: string; marker?: string };
    assert.equal(recorded.genesis_hash, await genesis(chain.localRpcUrl));
    assert.match(recorded.marker ?? '', /^0x[0-9a-f]{64}$/, 'its marker was stored on the node');
  } finally {
    await local.stop();
  }
});

test('a node that exits before answering, or never answers by the deadline: the start fails saying why when the chain is required, else it is left out; the node is not left running', async () => {
  const exits = { ...(await settings()), anvilPath: fakeAnvil('exits'), localChainRequired: true };
  await assert.rejects(ensureLocalChain(exits, dataFolder(), silentLogger), (error: Error) => {
    assert.ok(error instanceof LocalChainError);
    assert.equal(error.message, `the local chain did not come up: anvil exited with code 3 before it answered at ${exits.localRpcUrl}`);
    return true;
  });
  const optional = await ensureLocalChain({ ...exits, localChainRequired: false }, dataFolder(), silentLogger);
  assert.equal(optional.rpcUrl, undefined, 'not required: compile and test work without it');

  const mute = { ...(await settings()), anvilPath: fakeAnvil('mute'), rpcTimeoutMs: 200, localNodeStartTimeoutMs: 1_000, localChainRequired: true };
  await assert.rejects(ensureLocalChain(mute, dataFolder(), silentLogger), (error: Error) => {
    assert.ok(error instanceof LocalChainError);
    assert.match(
      error.message,
      /^the local chain did not come up: anvil did not answer at http:\/\/127\.0\.0\.1:\d+ within 1 s \(CONTRACTS_LOCAL_NODE_START_TIMEOUT_MS\)/,
    );
    return true;
  });
  // Stopped: its port is free again (a fresh listener can take it).
  const again = { ...mute, anvilPath: undefined, localNodeStartTimeoutMs: 60_000, rpcTimeoutMs: 5_000 };
  const real = await ensureLocalChain(again, dataFolder(), silentLogger);
  assert.equal(real.rpcUrl, again.localRpcUrl);
  await real.stop();
});
