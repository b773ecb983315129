import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { ServiceError } from '../errors.ts';
import { PortRpc } from './port-rpc.ts';

/** Two ends of a real MessageChannel: the same structured clone and delivery as between threads. */
function pair(left: ConstructorParameters<typeof PortRpc>[1], right: ConstructorParameters<typeof PortRpc>[1]) {
  const { port1, port2 } = new MessageChannel();
  const a = new PortRpc(port1, left);
  const b = new PortRpc(port2, right);
  return {
    a,
    b,
    close: () => {
      a.close();
      b.close();
      port1.close();
      port2.close();
    },
  };
}

describe('PortRpc', () => {
  it('answers calls in both directions, with values structured-cloned (bigints and dates included)', async () => {
    const { a, b, close } = pair({ double: (n: bigint) => n * 2n }, { later: async (at: Date) => new Date(at.getTime() + 1000) });
    try {
      assert.equal(await b.call('double', 21n), 42n);
      assert.deepEqual(await a.call('later', new Date(0)), new Date(1000));
    } finally {
      close();
    }
  });

  it('sends a ServiceError across as a ServiceError with its code, retryable flag and details; anything else as a plain Error', async () => {
    const { b, close } = pair(
      {
        refuse: () => {
          throw new ServiceError('conflict', 'insufficient funds', { details: { reason: 'insufficient_funds', available: '1.000000' } });
        },
        crash: () => {
          throw new TypeError('boom');
        },
      },
      {},
    );
    try {
      const refused = await b.call('refuse', null).catch((error: unknown) => error);
      assert.ok(refused instanceof ServiceError);
      assert.deepEqual(
        [refused.code, refused.status, refused.retryable, refused.message, refused.details],
        ['conflict', 409, false, 'insufficient funds', { reason: 'insufficient_funds', available: '1.000000' }],
      );
      const crashed = await b.call('crash', null).catch((error: unknown) => error);
      assert.ok(crashed instanceof Error && !(crashed instanceof ServiceError));
      assert.equal(crashed.message, 'boom');
      await assert.rejects(b.call('nothing', null), /no handler for nothing/);
    } finally {
      close();
    }
  });

  it('delivers notes and answers in the order they were made, many per message', async () => {
    const seen: number[] = [];
    const { b, close } = pair({ note: (n: number) => seen.push(n), echo: (n: number) => n }, {});
    try {
      for (let i = 0; i < 5; i++) b.notify('note', i);
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => b.call('echo', i)));
      assert.deepEqual(
        answers,
        Array.from({ length: 100 }, (_, i) => i),
      );
      assert.deepEqual(seen, [0, 1, 2, 3, 4]);
    } finally {
      close();
    }
  });

  it('rejects calls still waiting, and later ones, once closed', async () => {
    const { b, close } = pair({ never: () => new Promise(() => undefined) }, {});
    const waiting = b.call('never', null);
    b.close(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    await assert.rejects(b.call('never', null), /gone/);
    close();
  });
});
