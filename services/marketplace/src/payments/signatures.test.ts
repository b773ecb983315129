import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { Signatures } from './signatures.ts';

describe('the marketplace’s signatures: inline for a call alone, on the worker while calls overlap', () => {
  const agent = generateAgentKey('marketplace');
  const caller = generateAgentKey();
  const signatures = new Signatures(agent);
  after(() => signatures.close());
  const voucher = 'platform-marketplace-voucher-v1\n{"cumulative":"0.010000"}';

  /** Runs `work` while another call is being served. */
  async function overlapping<T>(work: () => Promise<T>): Promise<T> {
    let release = () => {};
    const other = signatures.during(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      return await signatures.during(work);
    } finally {
      release();
      await other;
    }
  }

  it('a call alone checks and signs inline, with the same answers the worker gives', async () => {
    const inline = signatures.during(async () => [signatures.verify(caller.publicKeyHex, voucher, caller.sign(voucher)), signatures.sign('text')]);
    assert.deepEqual(await inline, [true, agent.sign('text')], 'plain values: nothing waited for a thread');
    const offloaded = await overlapping(async () => [
      await signatures.verify(caller.publicKeyHex, voucher, caller.sign(voucher)),
      await signatures.verify(caller.publicKeyHex, voucher, agent.sign(voucher)),
      await signatures.sign('text'),
    ]);
    assert.deepEqual(offloaded, [true, false, agent.sign('text')]);
  });

  it('a worker that is gone costs no call: the job is done inline and the next one starts a new worker', async () => {
    await overlapping(() => Promise.resolve(signatures.sign('start the worker')));
    await signatures.close();
    assert.equal(await overlapping(async () => await signatures.verify(caller.publicKeyHex, voucher, caller.sign(voucher))), true);
    assert.equal(await overlapping(async () => await signatures.sign('again')), agent.sign('again'));
  });
});
