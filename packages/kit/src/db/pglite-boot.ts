import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

/**
 * Starting PGlite is dominated by two costs that are the same every time: compiling its WebAssembly (per instance)
 * and running initdb into a new data folder (2.5–5 s on our 2-core machines, the bulk of a service's first start
 * and of every in-memory test database). Both are paid once here: the modules are compiled once per process, and
 * initdb runs once per PGlite version into a template kept under `node_modules/.cache`; a new database starts as a
 * copy of the template (a folder copy, or the template's dump loaded into memory), 0.3–0.6 s.
 */

type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;

interface Modules {
  pgliteWasmModule: WasmModule;
  initdbWasmModule: WasmModule;
  fsBundle: Blob;
}

// The project's TypeScript libs leave out the WebAssembly namespace; Node has it, this is the one call we need.
const { compile } = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;

interface Template {
  /** A closed, freshly initialised data folder: copied for a new on-disk database. */
  dataDir: string;
  /** The same folder as PGlite's uncompressed dump (40 MB): read on the first in-memory database, not before. */
  dump(): Blob;
}

const distDir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
let modules: Promise<Modules> | undefined;
let template: Promise<Template | undefined> | undefined;

/**
 * A Blob whose `arrayBuffer()` answers bytes held in memory (all PGlite asks of it besides `type`). PGlite reads its
 * file bundle and the 40 MB dump with `arrayBuffer()` at every start, and Node's own Blob answers by streaming its
 * parts in chunks and joining them: a third of an in-memory start's CPU in the profile. The bundle is copied each
 * time, because Emscripten's file system keeps views into it; the dump is handed over as it is, because PGlite only
 * reads it (its untar copies each file out), which spares another 40 MB copy per start.
 */
function bytesBlob(bytes: Uint8Array, options: { type?: string; copy: boolean }): Blob {
  const held = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
  return new (class extends Blob {
    override arrayBuffer(): Promise<ArrayBuffer> {
      return Promise.resolve(options.copy ? held.slice(0) : held);
    }
  })([], { type: options.type ?? '' });
}

/**
 * `PLATFORM_PGLITE_SHORT_LIVED=1` (set by `npm test`) says this process lives seconds, not days: PGlite's WebAssembly
 * is compiled by V8's baseline compiler only, and databases start with a small page cache (below). By default
 * V8 also recompiles the module's hot functions with its optimising compiler on background threads, and the process
 * waits for that work at exit: for a process with a database or two (a test file, a service a test starts) that was
 * most of its CPU (measured: a process opening two databases, 4.6 s of CPU and 3.6 s of wall against 2.3 and 1.9 s;
 * the scheduler's route tests, 7.5 s of CPU against 4.4), while queries ran as fast or faster within its lifetime.
 * Long-running services keep the default, whose optimised code is 10–30 % faster per query once it is ready.
 */
const shortLived = (): boolean => process.env.PLATFORM_PGLITE_SHORT_LIVED === '1';

function useBaselineCompilerIfAsked(): void {
  if (!shortLived()) return;
  // `--liftoff-only` is not taken once V8 runs; these two, together, are (tier-up off, and its dynamic form off).
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}

function loadModules(): Promise<Modules> {
  modules ??= (async () => {
    useBaselineCompilerIfAsked();
    return {
      pgliteWasmModule: await compile(readFileSync(join(distDir, 'pglite.wasm'))),
      initdbWasmModule: await compile(readFileSync(join(distDir, 'initdb.wasm'))),
      fsBundle: bytesBlob(readFileSync(join(distDir, 'pglite.data')), { copy: true }),
    };
  })();
  return modules;
}

/** `node_modules/.cache/platform-pglite/<version>`: tied to the PGlite build that wrote it. */
function templateHome(): string {
  const version = (JSON.parse(readFileSync(join(distDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const nodeModules = distDir.slice(0, distDir.lastIndexOf('node_modules') + 'node_modules'.length);
  return join(process.env.PLATFORM_PGLITE_CACHE || join(nodeModules, '.cache', 'platform-pglite'), version);
}

/**
 * The template, built on first need. Several processes may race to build it (two test workers): each builds in its
 * own folder and renames it into place; a loser finds the winner's and discards its own. Undefined when the cache
 * cannot be written (a read-only install): then databases start the slow way, which is still correct.
 */
function loadTemplate(): Promise<Template | undefined> {
  template ??= (async () => {
    try {
      const home = templateHome();
      if (!existsSync(join(home, 'pgdata', 'PG_VERSION'))) await buildTemplate(home);
      let dump: Blob | undefined;
      return {
        dataDir: join(home, 'pgdata'),
        dump: () => (dump ??= bytesBlob(readFileSync(join(home, 'pgdata.tar')), { type: 'application/x-tar', copy: false })),
      };
    } catch {
      return undefined;
    }
  })();
  return template;
}

async function buildTemplate(home: string): Promise<void> {
  const building = `${home}.build-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(building, { recursive: true });
  try {
    const pglite = await PGlite.create(join(building, 'pgdata'), await loadModules());
    const dump = await pglite.dumpDataDir('none');
    await pglite.close();
    writeFileSync(join(building, 'pgdata.tar'), Buffer.from(await dump.arrayBuffer()));
    try {
      renameSync(building, home);
    } catch (error) {
      // Another process put its template in place first: theirs is as good as ours.
      if (!existsSync(join(home, 'pgdata', 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

/** No trace of a database yet. The folder may hold the service's other files (keys, chain state): those stay. */
function holdsNoDatabase(dir: string): boolean {
  return !['PG_VERSION', 'base', 'global'].some((entry) => existsSync(join(dir, entry)));
}

/**
 * PostgreSQL's page cache (128 MB by default) is set up at every start, most of it page faults: in a short-lived
 * process 32 MB takes a third off each start's CPU (measured 1.45 → 1.0 s in memory, and 0.4 s of CPU and 0.5 s of
 * wall less on disk, on a 2-core machine), which the test suite pays hundreds of times, and a test's data fits in it
 * many times over. Everything else keeps the default, so the benches measure what `npm start` runs.
 */
const shortLivedStartParams = (): Pick<PGliteOptions, 'startParams'> =>
  shortLived() ? { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'] } : {};

/**
 * A PGlite instance on `dataDir` (created from the template when new) or in memory (from the template's dump).
 * Same result as `PGlite.create(dataDir, options)`, without initdb.
 */
export async function createPGlite(dataDir: string | undefined, options: PGliteOptions): Promise<PGlite> {
  const [compiled, initialised] = await Promise.all([loadModules(), loadTemplate()]);
  if (dataDir === undefined) {
    return PGlite.create({
      ...shortLivedStartParams(),
      ...options,
      ...compiled,
      ...(initialised ? { loadDataDir: initialised.dump() } : {}),
    });
  }
  if (initialised && holdsNoDatabase(dataDir)) cpSync(initialised.dataDir, dataDir, { recursive: true });
  return PGlite.create(dataDir, { ...shortLivedStartParams(), ...options, ...compiled });
}

/** Builds the template now (the root postinstall calls it, so the first `npm start` runs no initdb); true when ready. */
export async function preparePGliteTemplate(): Promise<boolean> {
  return (await loadTemplate()) !== undefined;
}
