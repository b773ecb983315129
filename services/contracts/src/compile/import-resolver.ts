import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';

/** One import prefix served from a folder on disk (an installed npm package). */
export interface LibraryRoot {
  readonly prefix: string;
  readonly dir: string;
}

export type ImportResult = { contents: string } | { error: string };

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

/**
 * The libraries every project may import without sending them: forge-std 1.9.7 (the MIT/Apache repackaging inside
 * @layerzerolabs/toolbox-foundry, the only offline copy on the registry; Foundry's own layout puts the files under
 * src/, so both spellings resolve) and OpenZeppelin Contracts from npm. Longest prefix first.
 */
export function libraryRoots(): LibraryRoot[] {
  const forgeStd = join(packageDir('@layerzerolabs/toolbox-foundry'), 'lib', 'forge-std');
  return [
    { prefix: 'forge-std/src/', dir: forgeStd },
    { prefix: 'forge-std/', dir: forgeStd },
    { prefix: '@openzeppelin/contracts/', dir: packageDir('@openzeppelin/contracts') },
  ];
}

export const knownLibraries = 'forge-std/... and @openzeppelin/contracts/...';

/**
 * Resolves an import solc could not find among the project's own sources. Reads only inside a library's folder:
 * `forge-std/../../x` is refused even though it starts with a known prefix. File contents are kept, since every
 * compile of a forge-std test reads the same dozens of files.
 */
export class ImportResolver {
  readonly #roots: readonly LibraryRoot[];
  readonly #cache = new Map<string, ImportResult>();

  constructor(roots: readonly LibraryRoot[] = libraryRoots()) {
    this.#roots = roots;
  }

  resolve(path: string): ImportResult {
    const cached = this.#cache.get(path);
    if (cached) return cached;
    const result = this.#read(path);
    this.#cache.set(path, result);
    return result;
  }

  #read(path: string): ImportResult {
    const root = this.#roots.find((candidate) => path.startsWith(candidate.prefix));
    if (!root || !path.endsWith('.sol')) return { error: `unknown import "${path}": imports resolve from the sources sent and from ${knownLibraries}` };
    const file = resolve(root.dir, path.slice(root.prefix.length));
    if (!file.startsWith(root.dir + sep)) return { error: `import "${path}" leaves its library folder` };
    try {
      return { contents: readFileSync(file, 'utf8') };
    } catch {
      return { error: `import "${path}" is not a file of ${root.prefix.slice(0, -1)}` };
    }
  }
}
