import { join } from 'node:path';
import type { RunnableConfig } from '@langchain/core/runnables';
import { type Checkpoint, type CheckpointMetadata, MemorySaver, type PendingWrite } from '@langchain/langgraph-checkpoint';
import { ensureDirectory, writeFileDurably } from '../../src/files/durable-files.ts';

/**
 * LangGraph's in-memory saver made durable the way the daemon's journal is: every checkpoint and every task's writes
 * go to a file of their own, written to a temporary file, fsynced, renamed and the folder fsynced, before LangGraph
 * hears back. The peer then pays for the same durability on the same disk. (LangGraph's SQLite saver needs a native
 * better-sqlite3 build, which would add about a minute to every install for a benchmark peer.)
 */
export class DurableFileSaver extends MemorySaver {
  readonly #folder: string;

  constructor(folder: string) {
    super();
    this.#folder = folder;
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const saved = await super.put(config, checkpoint, metadata);
    const thread = String(saved.configurable?.thread_id);
    const namespace = String(saved.configurable?.checkpoint_ns ?? '');
    const [serialized, serializedMetadata, parent] = this.storage[thread]?.[namespace]?.[checkpoint.id] ?? [];
    await this.#write(thread, `${checkpoint.id}.json`, { checkpoint: text(serialized), metadata: text(serializedMetadata), parent: parent ?? null });
    return saved;
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    await super.putWrites(config, writes, taskId);
    const thread = String(config.configurable?.thread_id);
    await this.#write(thread, `${config.configurable?.checkpoint_id}-writes-${taskId}.json`, { writes: JSON.stringify(writes) });
  }

  async #write(thread: string, name: string, content: unknown): Promise<void> {
    const folder = join(this.#folder, thread);
    await ensureDirectory(folder);
    await writeFileDurably(join(folder, name), JSON.stringify(content));
  }
}

function text(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '' : Buffer.from(bytes).toString('base64');
}
