import { randomBytes } from 'node:crypto';
import { closeSync, fdatasync, fsync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, readFile, truncate } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Durable file writes: the daemon keeps all its state in its data folder (the user's volume), so nothing is
 * acknowledged before it would survive a power cut.
 *
 * The flushes (fsync, fdatasync) run on the thread pool so the event loop keeps serving while the disk works; the
 * rest (open, write, close, rename) are quick system calls made directly. Measured on tmpfs, that takes a journal
 * append from nine thread-pool round trips to two, which was most of the rail's own time per step.
 */
const flushData = promisify(fdatasync);
const flushAll = promisify(fsync);
/** Temporary names: unique in this process by the counter, across processes (and crashes) by the prefix. */
const temporaryPrefix = `.tmp-${randomBytes(4).toString('hex')}`;
let temporaryCounter = 0;

/** fsync a directory, so a file created or renamed in it is in the directory for good. */
export async function syncDirectory(path: string): Promise<void> {
  const descriptor = openSync(path, 'r');
  try {
    await flushAll(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** Creates a folder (and its parents) and makes its entry in the parent durable. */
export async function ensureDirectory(path: string): Promise<void> {
  const created = await mkdir(path, { recursive: true });
  if (created !== undefined) await syncDirectory(dirname(path));
}

/**
 * Writes a whole file atomically and durably: a temporary file in the same folder, fsync, rename over the target,
 * fsync the folder. A reader sees the old content or the new, never a part; after it resolves, a crash keeps the new.
 * `exclusive` refuses to replace an existing file (resolves false), for names that must be written once.
 *
 * @example await writeFileDurably(join(dir, '3-gate.invoked.json'), JSON.stringify(envelope))
 */
export async function writeFileDurably(path: string, content: string, options: { exclusive?: boolean; mode?: number } = {}): Promise<boolean> {
  const folder = dirname(path);
  const temporary = join(folder, `${temporaryPrefix}-${temporaryCounter++}`);
  const descriptor = openSync(temporary, 'wx', options.mode ?? 0o600);
  try {
    writeSync(descriptor, content, null, 'utf8');
    await flushData(descriptor);
  } finally {
    closeSync(descriptor);
  }
  try {
    if (options.exclusive) {
      // link() fails with EEXIST instead of replacing, which rename() would do silently.
      try {
        linkSync(temporary, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      } finally {
        rmSync(temporary, { force: true });
      }
    } else renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  await syncDirectory(folder);
  return true;
}

/**
 * Appends one line to a log file and fsyncs it before resolving. A crash can leave at most a torn last line, which
 * `readLines` skips and `repairTail` cuts off before the next append.
 */
export async function appendLineDurably(path: string, line: string): Promise<void> {
  const descriptor = openSync(path, 'a', 0o600);
  try {
    writeSync(descriptor, `${line}\n`, null, 'utf8');
    await flushData(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** Cuts a torn last line (no newline at the end) left by a crash, so the next append starts on a line of its own. */
export async function repairTail(path: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (text === '' || text.endsWith('\n')) return;
  await truncate(path, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1), 'utf8'));
}

/** The complete lines of a log file parsed as JSON; a torn or unreadable line is skipped. Missing file: []. */
export async function readJsonLines<T>(path: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  const lines: T[] = [];
  for (const line of complete.split('\n')) {
    if (line === '') continue;
    try {
      lines.push(JSON.parse(line) as T);
    } catch {
      // A line that does not parse cannot be a complete write of ours; skipping it is the safe reading.
    }
  }
  return lines;
}

/** A JSON file's content, or undefined when it does not exist. */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
