/*
 * The connector service's vault benchmark, peers measured in the same run:
 *  - seal and unseal per second of our Vault (AES-256-GCM, fresh IV, owner/connector additional data, key lookup,
 *    KeyObject per key) on a realistic credential (~300 bytes of JSON);
 *  - plain node:crypto AES-256-GCM on the same bytes, no additional data: with a raw key Buffer (imported on every
 *    call, the common way to write it) and with a KeyObject made once (the floor ours builds on);
 *  - WebCrypto (crypto.subtle) AES-GCM with the same additional data and an imported CryptoKey, awaited per call;
 *  - a credential read from the database (PGlite, in memory): select + unseal + decode, p50 and p99;
 *  - and a tool call through POST /v1/invoke against the same call straight to the provider stand-in (tool-call.ts).
 * Not part of `npm test`. Usage: npm run bench -w services/connector   (BENCH_SECONDS per contender, default 2)
 */
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes, webcrypto } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { silentLogger } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { p50, p99 } from '@platform/testkit/stats';
import { ConnectionsRepository } from '../src/connections/connections.repository.ts';
import { encodeCredential } from '../src/connections/credential.ts';
import { migrations } from '../src/db/migrations.ts';
import type { ConnectorSchema } from '../src/db/schema.ts';
import { additionalData, type Sealed, Vault } from '../src/vault/vault.ts';
import { benchToolCalls } from './tool-call.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = 5;
const binding = { owner: '8f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f', connector: 'google-workspace' };
const credential = {
  accessToken: `ya29.${randomBytes(120).toString('base64url')}`,
  refreshToken: `1//${randomBytes(75).toString('base64url')}`,
  expiresAt: new Date('2026-03-01T13:00:00Z'),
};
const plaintext = encodeCredential(credential);
const key = randomBytes(32);

const cpus = os.cpus();
await benchPreamble('connector');
console.log(`credential plaintext: ${plaintext.length} bytes; ${seconds} s per contender and operation, in ${rounds} round-robin slices (median)\n`);

/**
 * Operations per second of `fn` over `ms` (after a short warm-up). Synchronous functions run in a plain loop;
 * one that returns a promise is awaited call by call, as a caller of it would.
 */
async function rate(fn: () => unknown, ms: number): Promise<number> {
  const isAsync = fn() instanceof Promise;
  const run = isAsync
    ? async () => {
        for (let i = 0; i < 100; i++) await fn();
      }
    : async () => {
        for (let i = 0; i < 100; i++) fn();
      };
  const warmUntil = performance.now() + 100;
  while (performance.now() < warmUntil) await run();
  let count = 0;
  const start = performance.now();
  while (performance.now() < start + ms) {
    await run();
    count += 100;
  }
  return count / ((performance.now() - start) / 1000);
}

const median = (values: number[]) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

interface Contender {
  name: string;
  seal: () => unknown;
  unseal: () => unknown;
}

// Ours.
const vault = new Vault({ currentId: 'k1', keys: new Map([['k1', key]]) });
const ourSealed: Sealed = vault.seal(plaintext, binding);

// Plain node:crypto AES-256-GCM, no additional data; with the key as a raw Buffer and as a KeyObject made once.
const keyObject = createSecretKey(key);
const plainIv = randomBytes(12);
const plainCipher = createCipheriv('aes-256-gcm', key, plainIv);
const plainCiphertext = Buffer.concat([plainCipher.update(plaintext), plainCipher.final()]);
const plainTag = plainCipher.getAuthTag();
function plainSeal(withKey: Buffer | KeyObject) {
  const cipher = createCipheriv('aes-256-gcm', withKey, randomBytes(12));
  Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return cipher.getAuthTag();
}
function plainUnseal(withKey: Buffer | KeyObject) {
  const decipher = createDecipheriv('aes-256-gcm', withKey, plainIv);
  decipher.setAuthTag(plainTag);
  return Buffer.concat([decipher.update(plainCiphertext), decipher.final()]);
}

// WebCrypto, with the same additional data.
const subtleKey = await webcrypto.subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt', 'decrypt']);
const aad = additionalData(binding);
const subtleIv = randomBytes(12);
const subtleSealed = await webcrypto.subtle.encrypt({ name: 'AES-GCM', iv: subtleIv, additionalData: aad }, subtleKey, plaintext);

const contenders: Contender[] = [
  { name: 'vault (ours): AAD, key id, KeyObject', seal: () => vault.seal(plaintext, binding), unseal: () => vault.unseal(ourSealed, binding) },
  { name: 'plain AES-256-GCM, no AAD, KeyObject', seal: () => plainSeal(keyObject), unseal: () => plainUnseal(keyObject) },
  { name: 'plain AES-256-GCM, no AAD, raw key Buffer', seal: () => plainSeal(key), unseal: () => plainUnseal(key) },
  {
    name: 'crypto.subtle AES-GCM with AAD, awaited',
    seal: () => webcrypto.subtle.encrypt({ name: 'AES-GCM', iv: randomBytes(12), additionalData: aad }, subtleKey, plaintext),
    unseal: () => webcrypto.subtle.decrypt({ name: 'AES-GCM', iv: subtleIv, additionalData: aad }, subtleKey, subtleSealed),
  },
];

// Round-robin, median of rounds: no contender gets the quiet start or the warm heap to itself.
const cryptoFrom = cpuSnapshot([process.pid]);
const samples = contenders.map(() => ({ seal: [] as number[], unseal: [] as number[] }));
const sliceMs = (seconds * 1000) / rounds;
for (let round = 0; round < rounds; round++) {
  for (const [index, contender] of contenders.entries()) {
    samples[index]?.seal.push(await rate(contender.seal, sliceMs));
    samples[index]?.unseal.push(await rate(contender.unseal, sliceMs));
  }
}
const cryptoCpu = cpuBetween(cryptoFrom, cpuSnapshot([process.pid]));

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const results = samples.map((sample) => ({ seal: median(sample.seal), unseal: median(sample.unseal) }));
const ours = results[0] as { seal: number; unseal: number };
console.log('| contender | seal/s | unseal/s | ours ÷ it (seal) | ours ÷ it (unseal) |');
console.log('|---|---:|---:|---:|---:|');
for (const [index, contender] of contenders.entries()) {
  const result = results[index] as { seal: number; unseal: number };
  console.log(
    `| ${contender.name} | ${fmt(result.seal)} | ${fmt(result.unseal)} | ${(ours.seal / result.seal).toFixed(2)}× | ${(ours.unseal / result.unseal).toFixed(2)}× |`,
  );
}
console.log(
  `cores busy during the crypto runs: machine ${cryptoCpu.machine.toFixed(2)}, this process ${cryptoCpu.named(process.pid).toFixed(2)} (of ${cpus.length})`,
);

// A credential read as the tool path will do it: one select, unseal, decode.
const database = await openDatabase<ConnectorSchema>({ logger: silentLogger });
await migrate(database, 'connector', migrations);
const repository = new ConnectionsRepository(database.db, vault, new ManualClock());
for (let i = 0; i < 1_000; i++) await repository.save(`owner-${i}`, binding.connector, [], credential);
const latencies: number[] = [];
const from = cpuSnapshot([process.pid]);
for (let i = 0; i < 5_000; i++) {
  const start = performance.now();
  await repository.open(`owner-${i % 1_000}`, binding.connector);
  latencies.push(performance.now() - start);
}
const used = cpuBetween(from, cpuSnapshot([process.pid]));
await database.close();
console.log(
  `\ncredential read from PGlite (select + unseal + decode), 5,000 reads over 1,000 rows: p50 ${p50(latencies).toFixed(3)} ms, p99 ${p99(latencies).toFixed(3)} ms`,
);
console.log(`cores busy during the reads: machine ${used.machine.toFixed(2)}, this process ${used.named(process.pid).toFixed(2)}`);

// A tool call through the service (vault decrypt per call) against the provider called directly.
const toolCalls = Number(process.env.BENCH_TOOL_CALLS ?? 5_000);
const toolFrom = cpuSnapshot([process.pid]);
const tool = await benchToolCalls(vault, toolCalls);
const toolCpu = cpuBetween(toolFrom, cpuSnapshot([process.pid]));
console.log(`\ntool call (calendar_list, 5 events), ${fmt(toolCalls)} sequential calls per path, keep-alive HTTP:`);
console.log('| path | calls/s | p50 ms | p99 ms |');
console.log('|---|---:|---:|---:|');
console.log(`| provider stand-in directly | ${fmt(tool.direct.perSecond)} | ${tool.direct.p50.toFixed(3)} | ${tool.direct.p99.toFixed(3)} |`);
console.log(`| through the connector (/v1/invoke) | ${fmt(tool.through.perSecond)} | ${tool.through.p50.toFixed(3)} | ${tool.through.p99.toFixed(3)} |`);
console.log(
  `added at p50: ${(tool.through.p50 - tool.direct.p50).toFixed(3)} ms (target < 2 ms); calls/s through ÷ direct: ${(tool.through.perSecond / tool.direct.perSecond).toFixed(2)}×`,
);
console.log(`cores busy during the tool calls: machine ${toolCpu.machine.toFixed(2)}, this process ${toolCpu.named(process.pid).toFixed(2)}`);
