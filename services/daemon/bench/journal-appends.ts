import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { envelopeHash } from '@platform/kit/journal-envelope';
import { p50, p99 } from '@platform/testkit/stats';
import { ensureDirectory, writeFileDurably } from '../src/files/durable-files.ts';
import { JournalStore } from '../src/journal/journal-store.ts';

/*
 * Journal appends: each one signed (ed25519 over RFC 8785 bytes), hash-chained and durable (temporary file, fsync,
 * rename, fsync of the folder) before it resolves. Beside it, the same bytes written durably the same way without
 * the journal's work (no canonical JSON, no signature, no chain): the floor the disk sets.
 */

export interface AppendFigures {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  parallelPerSecond: number;
  floorPerSecond: number;
}

const body = { node_id: 'draft', result: 'A short note about the meeting at three, with the people who come and what they bring.' };

async function timedLoop(count: number, append: (index: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await append(index);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

export async function measureAppends(count: number): Promise<AppendFigures> {
  const folder = mkdtempSync(join(tmpdir(), 'daemon-journal-'));
  try {
    const store = new JournalStore(join(folder, 'journal'), privateKeyFromSeed('cd'.repeat(32)));
    await store.open();
    const at = () => new Date();
    const first = await store.create('intent.created', { prose: 'bench' }, at());
    const id = envelopeHash(first);
    const latencies = await timedLoop(count, () => store.append(id, 'step.completed', body, at()));
    const seconds = latencies.reduce((sum, ms) => sum + ms, 0) / 1000;

    // Eight intents appending at once: fsyncs of different files overlap.
    const intents = await Promise.all(Array.from({ length: 8 }, () => store.create('intent.created', { prose: 'bench' }, at())));
    const parallelStart = performance.now();
    await Promise.all(intents.map((created) => timedLoop(Math.ceil(count / 8), () => store.append(envelopeHash(created), 'step.completed', body, at()))));
    const parallelSeconds = (performance.now() - parallelStart) / 1000;

    const plain = join(folder, 'plain');
    await ensureDirectory(plain);
    const text = JSON.stringify({ intent_id: id, seq: 2, kind: 'step.completed', at: at().toISOString(), prev: id, body, signature: 'ab'.repeat(64) });
    const floor = await timedLoop(count, (index) => writeFileDurably(join(plain, `${index}.json`), text));
    const floorSeconds = floor.reduce((sum, ms) => sum + ms, 0) / 1000;
    return {
      perSecond: count / seconds,
      p50Ms: p50(latencies),
      p99Ms: p99(latencies),
      parallelPerSecond: (Math.ceil(count / 8) * 8) / parallelSeconds,
      floorPerSecond: count / floorSeconds,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
