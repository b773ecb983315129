import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';

/** One file of the built console, with its compressed forms made once at load. */
export interface ConsoleFile {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  brotli: Buffer | undefined;
  /** Vite names assets by content hash: they never change under one name. */
  immutable: boolean;
}

const types: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};
const compressible = new Set(['.html', '.js', '.css', '.svg', '.json', '.webmanifest', '.txt']);
/** The build is a few files of a few hundred KiB at most; anything far larger is not ours. */
const maxFileBytes = 8 * 1024 * 1024;

/**
 * The built console in memory: every file under `dir` by its path below `/console/`, compressed once (brotli and
 * gzip) so a request costs no compression. Undefined when the folder holds no index.html (not built).
 */
export function loadConsoleFiles(dir: string): Map<string, ConsoleFile> | undefined {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return undefined;
  }
  const files = new Map<string, ConsoleFile>();
  for (const name of names) {
    const path = join(dir, name);
    const stat = statSync(path);
    const extension = extname(name);
    if (!stat.isFile() || stat.size > maxFileBytes || types[extension] === undefined) continue;
    const body = readFileSync(path);
    const small = body.length < 512 || !compressible.has(extension);
    files.set(relative(dir, path).split('\\').join('/'), {
      type: types[extension] as string,
      body,
      gzip: small ? undefined : gzipSync(body, { level: 9 }),
      brotli: small ? undefined : brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
      immutable: name.startsWith(`assets${'/'}`),
    });
  }
  return files.has('index.html') ? files : undefined;
}

/** The best encoding the client accepts among those made: brotli, then gzip, else none. */
export function pickEncoding(file: ConsoleFile, acceptEncoding: string | undefined): { encoding: 'br' | 'gzip' | undefined; body: Buffer } {
  const accepted = (acceptEncoding ?? '').toLowerCase();
  if (file.brotli && /\bbr\b/.test(accepted)) return { encoding: 'br', body: file.brotli };
  if (file.gzip && /\bgzip\b/.test(accepted)) return { encoding: 'gzip', body: file.gzip };
  return { encoding: undefined, body: file.body };
}
