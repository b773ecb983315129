import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { Ed25519Worker } from '@platform/kit/auth/ed25519-worker';
import { encodeIntent, newIntentNonce, signIntent } from '@platform/kit/settlement-intent';
import { forgedIntent } from '@platform/testkit/forged-intent';
import { ManualClock } from '@platform/testkit/manual-clock';
import type { FastifyRequest } from 'fastify';
import { authorise } from './authorise.ts';

const clock = new ManualClock(new Date('2026-03-01T12:00:00.000Z'));
const payer = generateAgentKey();
const holdWire = () =>
  encodeIntent(
    signIntent(
      {
        version: 1,
        from: payer.did,
        to: generateAgentKey().did,
        amount: '1',
        ref: '',
        nonce: newIntentNonce(),
        expiry: new Date(clock.now().getTime() + 60_000).toISOString(),
        purpose: 'hold',
      },
      payer,
    ),
  );
const anonymous = { principal: null } as unknown as FastifyRequest;

describe('authorise with a signature worker', () => {
  it('checks the signature on the worker, and in place once the worker is gone', async () => {
    const worker = new Ed25519Worker();
    const forged = forgedIntent(holdWire());
    try {
      for (const round of ['worker', 'after the worker stopped']) {
        const accepted = await authorise(anonymous, clock, holdWire(), 'hold', worker);
        assert.deepEqual([accepted.via, accepted.did], ['intent', payer.did], round);
        await assert.rejects(authorise(anonymous, clock, forged, 'hold', worker), { code: 'unauthorized', message: /signature does not verify/ }, round);
        await worker.close();
      }
    } finally {
      await worker.close();
    }
  });
});
