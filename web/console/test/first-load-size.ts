import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib';
import { consoleDist } from '../scripts/build.ts';

/** What the first load fetches: the scripts and stylesheets index.html names, raw and compressed as the router sends them. */
export function firstLoadBytes(): { files: { name: string; raw: number; gzip: number; brotli: number }[]; scriptGzip: number; scriptBrotli: number } {
  const index = readFileSync(join(consoleDist, 'index.html'), 'utf8');
  const named = [...index.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((match) => match[1] as string);
  const assets = new Set(readdirSync(join(consoleDist, 'assets')).map((name) => `assets/${name}`));
  const files = named
    .filter((name) => assets.has(name))
    .map((name) => {
      const body = readFileSync(join(consoleDist, name));
      return {
        name,
        raw: body.length,
        gzip: gzipSync(body, { level: 9 }).length,
        brotli: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length,
      };
    });
  const scripts = files.filter((file) => file.name.endsWith('.js'));
  return {
    files,
    scriptGzip: scripts.reduce((sum, file) => sum + file.gzip, 0),
    scriptBrotli: scripts.reduce((sum, file) => sum + file.brotli, 0),
  };
}

/** The budget: first load under 200 KB of JavaScript, compressed. */
export const scriptBudgetBytes = 200 * 1000;
