import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { publicKeyFromHex } from '@platform/kit/auth/ed25519';
import { type JournalEnvelope, verifyChain } from '@platform/kit/journal-envelope';
import { envelopeFiles, intentIdPattern } from './journal-store.ts';

export interface IntentVerdict {
  intentId: string;
  ok: boolean;
  count: number;
  lastKind?: string;
  /** The first bad envelope: its seq, file and what is wrong. */
  bad?: { seq: number; file: string; reason: string };
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** The intent folders under `folder`: itself (an intent's folder), its children (a journal), or `journal/` (a data folder). */
export async function intentFolders(folder: string): Promise<string[]> {
  if (intentIdPattern.test(basename(folder)) && (await isDirectory(folder))) return [folder];
  const journal = (await isDirectory(join(folder, 'journal'))) ? join(folder, 'journal') : folder;
  const names = await readdir(journal, { withFileTypes: true });
  return names.filter((entry) => entry.isDirectory() && intentIdPattern.test(entry.name)).map((entry) => join(journal, entry.name));
}

/** The public key in `identity.json` of the data folder the journal sits in, if there is one. */
export async function identityKeyNear(folder: string): Promise<{ publicKeyHex: string; path: string } | undefined> {
  for (let current = folder, depth = 0; depth < 3; current = dirname(current), depth++) {
    const path = join(current, 'identity.json');
    try {
      const card = JSON.parse(await readFile(path, 'utf8')) as { public_key?: unknown };
      if (typeof card.public_key === 'string') return { publicKeyHex: card.public_key, path };
    } catch {
      // Not here; look one folder up.
    }
  }
  return undefined;
}

/**
 * Verifies one intent's folder offline: every file named `<seq>-<kind>.json` after its content, in order from 1, and
 * the chain (positions, prev hashes, the intent id as the folder name, signatures) against the public key.
 */
export async function verifyIntentFolder(folder: string, publicKeyHex: string): Promise<IntentVerdict> {
  const intentId = basename(folder);
  if (publicKeyFromHex(publicKeyHex) === undefined) throw new Error('the public key must be 64 hex characters (an ed25519 key)');
  const files = await envelopeFiles(folder);
  const envelopes: JournalEnvelope[] = [];
  for (const [index, file] of files.entries()) {
    let envelope: JournalEnvelope;
    try {
      envelope = JSON.parse(await readFile(join(folder, file.name), 'utf8'));
    } catch {
      return { intentId, ok: false, count: files.length, bad: { seq: index + 1, file: file.name, reason: 'the file is not JSON' } };
    }
    if (file.seq !== index + 1)
      return { intentId, ok: false, count: files.length, bad: { seq: index + 1, file: file.name, reason: `envelope ${index + 1} is missing` } };
    if (envelope.seq !== file.seq || envelope.kind !== file.kind)
      return { intentId, ok: false, count: files.length, bad: { seq: file.seq, file: file.name, reason: 'the file name does not match its seq and kind' } };
    envelopes.push(envelope);
  }
  const verdict = await verifyChain(envelopes, publicKeyHex, intentId);
  if (verdict.ok) return { intentId, ok: true, count: verdict.count, lastKind: verdict.lastKind };
  return { intentId, ok: false, count: envelopes.length, bad: { seq: verdict.seq, file: files[verdict.seq - 1]?.name ?? '(none)', reason: verdict.reason } };
}
