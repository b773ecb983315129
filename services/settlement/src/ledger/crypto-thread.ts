import type { KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { messageSigner } from '@platform/kit/auth/ed25519';
import { type BalanceInput, buildBalanceTree, newLeafMemo } from '../balances/balance-tree.ts';
import { buildWithdrawalTree, type WithdrawalInput } from '../balances/withdrawal-tree.ts';

/** The far side of CryptoWorker: signs receipt bytes and builds balance trees, off the request thread. */

export type CryptoRequest =
  | { id: number; op: 'key'; privateKey: KeyObject }
  /** The messages back to back in `bytes`; `ends[i]` is where message i ends. */
  | { id: number; op: 'sign'; bytes: Uint8Array; ends: Uint32Array }
  | { id: number; op: 'tree'; balances: BalanceInput[] }
  | { id: number; op: 'withdrawals'; withdrawals: WithdrawalInput[] };

export type CryptoReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

let sign: ((message: Uint8Array) => string) | undefined;
/** Kept across closes: only accounts whose balance moved are hashed again. */
const memo = newLeafMemo();

function run(request: CryptoRequest): unknown {
  switch (request.op) {
    case 'key':
      sign = messageSigner(request.privateKey);
      return null;
    case 'sign': {
      const signer = sign;
      if (!signer) throw new Error('no signing key yet');
      const signatures: string[] = [];
      let start = 0;
      for (const end of request.ends) {
        signatures.push(signer(request.bytes.subarray(start, end)));
        start = end;
      }
      return signatures;
    }
    case 'tree': {
      const tree = buildBalanceTree(request.balances, memo);
      return { root: tree.root, size: tree.size, dump: tree.dump() };
    }
    case 'withdrawals':
      return buildWithdrawalTree(request.withdrawals) ?? null;
  }
}

parentPort?.on('message', (request: CryptoRequest) => {
  let reply: CryptoReply;
  try {
    reply = { id: request.id, ok: true, value: run(request) };
  } catch (error) {
    reply = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
