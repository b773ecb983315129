import { createRequire } from 'node:module';
import type { CompileProduct } from './compile-product.ts';
import type { SolcWorkers } from './solc-workers.ts';
import { buildHashOf, type CompileSettings, type SourceMap } from './sources.ts';

/** One compiled project, kept in memory for repeat compiles and for test runs. */
export interface Build {
  buildHash: string;
  sources: SourceMap;
  settings: CompileSettings;
  product: CompileProduct;
  /** How long solc took when it actually ran. */
  compileMs: number;
}

export const solcVersion = (createRequire(import.meta.url)('solc/package.json') as { version: string }).version;

/**
 * The compile cache in front of the solc threads: a build is found by the content hash of its sources, settings
 * and compiler, so an unchanged project answers in milliseconds. The most recently used `cacheEntries` builds are
 * kept (broken ones too: their diagnostics do not change either); identical compiles in flight share one solc run.
 */
export class Compiler {
  readonly #workers: SolcWorkers;
  readonly #cacheEntries: number;
  readonly #cache = new Map<string, Build>();
  readonly #inFlight = new Map<string, Promise<Build>>();

  constructor(options: { workers: SolcWorkers; cacheEntries: number }) {
    this.#workers = options.workers;
    this.#cacheEntries = options.cacheEntries;
  }

  async compile(sources: SourceMap, settings: CompileSettings): Promise<{ build: Build; cached: boolean }> {
    const buildHash = buildHashOf(sources, settings, solcVersion);
    const hit = this.#cache.get(buildHash);
    if (hit) {
      // Map order is the LRU order: a hit moves to the back.
      this.#cache.delete(buildHash);
      this.#cache.set(buildHash, hit);
      return { build: hit, cached: true };
    }
    let running = this.#inFlight.get(buildHash);
    if (!running) {
      running = this.#run(sources, settings, buildHash);
      this.#inFlight.set(buildHash, running);
    }
    return { build: await running, cached: false };
  }

  async #run(sources: SourceMap, settings: CompileSettings, buildHash: string): Promise<Build> {
    try {
      const started = performance.now();
      const product = await this.#workers.compile(sources, settings, buildHash);
      const build: Build = { buildHash, sources, settings, product, compileMs: Math.round(performance.now() - started) };
      this.#cache.set(buildHash, build);
      while (this.#cache.size > this.#cacheEntries) this.#cache.delete(this.#cache.keys().next().value as string);
      return build;
    } finally {
      this.#inFlight.delete(buildHash);
    }
  }
}
