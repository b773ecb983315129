import { parentPort, workerData } from 'node:worker_threads';
import { privateKeyFromSeed, publicKeyFromHex, signMessage, verifyMessage } from './ed25519.ts';

/** The far side of Ed25519Worker: checks and makes ed25519 signatures in batches, off the request thread. */

/** One job: `[id, 'verify', publicKeyHex, message, signatureHex]` or `[id, 'sign', message]`. */
export type Ed25519Job = [id: number, op: 'verify', publicKeyHex: string, message: string, signatureHex: string] | [id: number, op: 'sign', message: string];

/** Answers in the jobs' order: a boolean for a verification, the signature's hex for a signing, null when it failed. */
export type Ed25519Answer = [id: number, value: boolean | string | null];

const seedHex = (workerData as { seedHex?: string } | undefined)?.seedHex;
const privateKey = seedHex === undefined ? undefined : privateKeyFromSeed(seedHex);

function run(job: Ed25519Job): boolean | string | null {
  if (job[1] === 'sign') return privateKey ? signMessage(privateKey, job[2]) : null;
  const key = publicKeyFromHex(job[2]);
  return key !== undefined && verifyMessage(key, job[3], job[4]);
}

parentPort?.on('message', (jobs: Ed25519Job[]) => {
  parentPort?.postMessage(jobs.map((job): Ed25519Answer => [job[0], run(job)]));
});
