import { readdir, readFile } from 'node:fs/promises';

/** The processes below `pid`, children first (read from /proc; empty when it is gone). */
export async function descendantPids(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    children.push(...text.split(' ').filter(Boolean).map(Number));
  }
  return (await Promise.all(children.map(async (child) => [child, ...(await descendantPids(child))]))).flat();
}

/** A process's command line, its arguments joined by NUL; '' once it has exited. */
export const commandLineOf = (pid: number): Promise<string> => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');

/** A process's resident memory in bytes (VmRSS); 0 once it has exited. */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kib === undefined ? 0 : Number(kib) * 1024;
}

/** The first process below `pid` whose command line contains `name`. */
export async function findDescendant(pid: number, name: string): Promise<number | undefined> {
  for (const child of await descendantPids(pid)) if ((await commandLineOf(child)).includes(name)) return child;
  return undefined;
}
