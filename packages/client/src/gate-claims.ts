import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A gate-claim hook for `delegate` shared by every client that can see one folder (processes on one machine, or a
 * shared volume): the first to create `<intent>.<node>.claim` answers that gate, the others leave it alone.
 *
 * @example await delegate(daemon, prose, { approver, claimGate: folderGateClaims('/run/platform/claims') })
 */
export function folderGateClaims(folder: string): (intentId: string, nodeId: string) => Promise<boolean> {
  return async (intentId, nodeId) => {
    await mkdir(folder, { recursive: true });
    try {
      await writeFile(join(folder, `${intentId}.${encodeURIComponent(nodeId)}.claim`), `${process.pid}\n`, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  };
}
