import { type LocalNode, startAnvil } from '@platform/kit/chain/anvil';
import { silentLogger } from './databases.ts';

/** A local anvil node started by a test, with the node's own test methods a chain test needs. */
export interface TestChain extends LocalNode {
  /** The node's JSON-RPC, for methods viem has no helper for (anvil_*, evm_*). */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Takes a snapshot of the chain; `revert` rolls back to it (a reorg, as far as a watcher can tell). */
  snapshot(): Promise<string>;
  revert(id: string): Promise<void>;
  /** Mines `blocks` empty blocks at once. */
  mine(blocks?: number): Promise<void>;
  /** With automine off, transactions wait in the pool until `mine`. */
  setAutomine(on: boolean): Promise<void>;
  /** Moves the next block's timestamp forward (a force-withdraw delay passing). */
  increaseTime(seconds: number): Promise<void>;
  setBalance(address: string, wei: bigint): Promise<void>;
}

const running = new Set<number>();
// A test file that ends without its after-hooks (a failure, a timeout) must not leave nodes behind.
process.once('exit', () => {
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/**
 * Starts anvil on a free loopback port (the binary installed with @foundry-rs/anvil; nothing is downloaded).
 *
 * @example const chain = await startTestChain(); … await chain.mine(3); … await chain.stop()
 */
export async function startTestChain(options: { chainId?: number } = {}): Promise<TestChain> {
  const node = await startAnvil({ host: '127.0.0.1', port: 0, chainId: options.chainId ?? 31337, logger: silentLogger });
  running.add(node.pid);
  const stop = async () => {
    await node.stop();
    running.delete(node.pid);
  };
  let nextId = 1;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    const body = (await response.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const hex = (value: number | bigint) => `0x${value.toString(16)}`;
  return {
    ...node,
    stop,
    rpc,
    snapshot: () => rpc<string>('evm_snapshot'),
    revert: async (id) => {
      if (!(await rpc<boolean>('evm_revert', [id]))) throw new Error(`no snapshot ${id}`);
    },
    mine: async (blocks = 1) => {
      await rpc('anvil_mine', [hex(blocks)]);
    },
    setAutomine: async (on) => {
      await rpc('evm_setAutomine', [on]);
    },
    increaseTime: async (seconds) => {
      await rpc('evm_increaseTime', [hex(seconds)]);
    },
    setBalance: async (address, wei) => {
      await rpc('anvil_setBalance', [address, hex(wei)]);
    },
  };
}
