// Scratch: the sequencer alone (no HTTP) on PostgreSQL, to see where the ceiling is.

import { generateAgentKey } from '@platform/client/agent-key';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { systemClock } from '@platform/kit/clock';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import pino from 'pino';
import { createTempDatabase } from '../../scheduler/bench/temp-db.ts';
import { recordingChain } from '../src/chain/settlement-chain.ts';
import { migrations } from '../src/db/migrations.ts';
import type { SettlementSchema } from '../src/db/schema.ts';
import { sequencerKey } from '../src/ledger/ledger-key.ts';
import { LogView } from '../src/ledger/log-view.ts';
import { Sequencer } from '../src/ledger/sequencer.ts';

const temp = await createTempDatabase('postgres://postgres@127.0.0.1:5432/postgres');
const logger = pino({ level: 'warn' });
const database = await openDatabase<SettlementSchema>({ url: temp.url, schema: 'settlement', logger });
await migrate(database, 'settlement', migrations);
const sequencer = new Sequencer({
  database,
  key: sequencerKey(privateKeyFromSeed('11'.repeat(32)), 'x'),
  clock: systemClock,
  logger,
  log: new LogView(),
  chain: recordingChain({ chainId: 125, vaultAddress: null, anchorAddress: null }),
  window: { seconds: 3600, maxReceipts: 1_000_000, immediateMicros: 10n ** 15n },
  maxGroup: Number(process.env.GROUP ?? 512),
  takeoverPollMs: 100,
  tickMs: 100_000,
});
sequencer.start();
while (sequencer.role !== 'sequencer') await new Promise((r) => setTimeout(r, 10));
const dids = Array.from({ length: 200 }, () => generateAgentKey().did);
for (const did of dids) await sequencer.submit({ kind: 'deposit', did, micros: 1_000_000_000n, source: 'faucet', txHash: `f:${did}`, logIndex: 0 });
const inflight = Number(process.env.INFLIGHT ?? 256);
let done = 0;
let stop = false;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: inflight }, async (_, w) => {
    let i = 0;
    while (!stop) {
      const from = dids[(w + i) % 200] as string;
      const to = dids[(w + i + 1) % 200] as string;
      await sequencer.submit({ kind: 'pay', from, to, micros: 1n, ref: '', idempotency: { key: `${w}-${i++}`, requestHash: 'h' } });
      done++;
      if (performance.now() - t0 > 5000) stop = true;
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
console.log((globalThis as any).T);
console.log(`${inflight} in flight: ${Math.round(done / seconds)} pays/s, cpu ${JSON.stringify(process.cpuUsage())}`);
await sequencer.stop();
await database.close();
await temp.drop();
