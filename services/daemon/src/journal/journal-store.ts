import type { KeyObject } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { envelopeHash, envelopeKindPattern, type JournalEnvelope, signEnvelope } from '@platform/kit/journal-envelope';
import { ensureDirectory, writeFileDurably } from '../files/durable-files.ts';
import { KeyedQueue } from '../keyed-queue.ts';

/** `journal/<intent_id>/<seq>-<kind>.json`, the spec's layout; the name alone tells position and kind. */
const fileNamePattern = /^(\d+)-([a-z]+(?:\.[a-z]+)*)\.json$/;
export const intentIdPattern = /^[0-9a-f]{64}$/;

/** What the file names of one intent's folder say, without reading the envelopes. */
export interface JournalListing {
  id: string;
  kinds: string[];
}

/** Where one chain stands: the next append needs the last seq and hash. */
interface ChainTail {
  seq: number;
  hash: string;
}

/**
 * The signed journal on disk: one folder per intent, one file per envelope, each written durably (temporary file,
 * fsync, rename, fsync of the folder) before the append resolves. Appends to one intent are serialised, so seq and
 * prev always follow the file before; different intents append independently.
 */
export class JournalStore {
  readonly root: string;
  readonly #privateKey: KeyObject;
  readonly #tails = new Map<string, ChainTail>();
  readonly #appends = new KeyedQueue();
  readonly #appended: () => void;

  /** `appended` is told of every envelope once it is durable (`daemon_journal_appends_total`). */
  constructor(root: string, privateKey: KeyObject, appended: () => void = () => {}) {
    this.root = root;
    this.#privateKey = privateKey;
    this.#appended = appended;
  }

  async open(): Promise<void> {
    await ensureDirectory(this.root);
  }

  /** Starts a chain: signs the first envelope, whose hash becomes the intent id, and writes it in a new folder. */
  async create(kind: string, body: Record<string, unknown>, at: Date): Promise<JournalEnvelope> {
    checkKind(kind);
    const envelope = signEnvelope(this.#privateKey, { intent_id: null, seq: 1, kind, at: at.toISOString(), prev: null, body });
    const id = envelopeHash(envelope);
    const folder = join(this.root, id);
    await ensureDirectory(folder);
    await writeFileDurably(join(folder, `1-${kind}.json`), JSON.stringify(envelope), { exclusive: true });
    this.#tails.set(id, { seq: 1, hash: id });
    this.#appended();
    return envelope;
  }

  /** Appends the next envelope of an intent; resolves once it is durable. */
  append(intentId: string, kind: string, body: Record<string, unknown>, at: Date): Promise<JournalEnvelope> {
    checkKind(kind);
    return this.#appends.run(intentId, () => this.#append(intentId, kind, body, at));
  }

  async #append(intentId: string, kind: string, body: Record<string, unknown>, at: Date): Promise<JournalEnvelope> {
    const tail = this.#tails.get(intentId) ?? (await this.#tailFromDisk(intentId));
    const envelope = signEnvelope(this.#privateKey, { intent_id: intentId, seq: tail.seq + 1, kind, at: at.toISOString(), prev: tail.hash, body });
    const written = await writeFileDurably(join(this.root, intentId, `${envelope.seq}-${kind}.json`), JSON.stringify(envelope), { exclusive: true });
    if (!written) throw new Error(`journal ${intentId} already has an envelope ${envelope.seq}`);
    this.#tails.set(intentId, { seq: envelope.seq, hash: envelopeHash(envelope) });
    this.#appended();
    return envelope;
  }

  async #tailFromDisk(intentId: string): Promise<ChainTail> {
    const envelopes = await this.read(intentId);
    const last = envelopes.at(-1);
    if (last === undefined) throw new Error(`journal ${intentId} has no envelopes`);
    return { seq: last.seq, hash: envelopeHash(last) };
  }

  /** Every intent folder with the kinds of its envelopes in order, from file names alone. */
  async list(): Promise<JournalListing[]> {
    const folders = await readdir(this.root, { withFileTypes: true });
    const listings: JournalListing[] = [];
    for (const folder of folders) {
      if (!folder.isDirectory() || !intentIdPattern.test(folder.name)) continue;
      const files = await envelopeFiles(join(this.root, folder.name));
      if (files.length > 0) listings.push({ id: folder.name, kinds: files.map((file) => file.kind) });
    }
    return listings;
  }

  /** One intent's envelopes in order; [] when the folder does not exist. */
  async read(intentId: string): Promise<JournalEnvelope[]> {
    if (!intentIdPattern.test(intentId)) return [];
    const folder = join(this.root, intentId);
    let files: EnvelopeFile[];
    try {
      files = await envelopeFiles(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return Promise.all(files.map(async (file) => JSON.parse(await readFile(join(folder, file.name), 'utf8')) as JournalEnvelope));
  }

  /** The first envelope only (the intent's creation), for listings. */
  async first(intentId: string): Promise<JournalEnvelope | undefined> {
    try {
      return JSON.parse(await readFile(join(this.root, intentId, (await envelopeFiles(join(this.root, intentId)))[0]?.name ?? '1-missing.json'), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}

interface EnvelopeFile {
  name: string;
  seq: number;
  kind: string;
}

/** The envelope files of a folder sorted by seq (temporary files of an interrupted write are ignored). */
export async function envelopeFiles(folder: string): Promise<EnvelopeFile[]> {
  const files: EnvelopeFile[] = [];
  for (const name of await readdir(folder)) {
    const match = fileNamePattern.exec(name);
    if (match) files.push({ name, seq: Number(match[1]), kind: match[2] as string });
  }
  return files.sort((a, b) => a.seq - b.seq);
}

function checkKind(kind: string): void {
  if (!envelopeKindPattern.test(kind)) throw new Error(`malformed envelope kind "${kind}"`);
}
