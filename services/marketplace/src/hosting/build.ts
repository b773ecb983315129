import { posix } from 'node:path';
import { build, type Message, type Plugin } from 'esbuild';
import type { HostedModule } from '../db/schema.ts';
import { hostedLimits } from './hosted-limits.ts';
import { entrySource, preludeSource } from './worker-wrapper.ts';

/** The one ES module a deployment runs: the wrapper and the developer's modules bundled; WebAssembly stays beside it. */
export const bundleModuleName = 'platform-entry.js';

export type BuildOutcome = { ok: true; bundle: string } | { ok: false; reason: string };

/** The runtime's own modules an upload may import (the rest must be among the uploaded modules). */
const runtimeModule = /^(cloudflare:(workers|sockets|email)|node:[a-z_/]+)$/;

/**
 * Builds an upload: esbuild bundles the wrapper (worker-wrapper.ts) and the modules from memory, resolving relative
 * imports among the uploaded modules only (nothing is read from disk, nothing fetched). An import that is neither
 * uploaded nor the runtime's (`node:*` under nodejs_compat, `cloudflare:*`) fails the build, naming its line.
 */
export async function buildDeployment(artifact: { main_module: string; modules: HostedModule[] }): Promise<BuildOutcome> {
  const byName = new Map(artifact.modules.map((module) => [module.name, module]));
  const plugin: Plugin = {
    name: 'uploaded-modules',
    setup(on) {
      on.onResolve({ filter: /^platform:(entry|prelude)$/ }, (args) => ({ path: args.path, namespace: 'platform' }));
      on.onResolve({ filter: /.*/ }, (args) => {
        if (runtimeModule.test(args.path)) return { path: args.path, external: true };
        if (!args.path.startsWith('./') && !args.path.startsWith('../'))
          return {
            errors: [{ text: `cannot import "${args.path}": the runtime has no such module (upload it as a module of its own, or bundle it into yours)` }],
          };
        const from = args.namespace === 'upload' ? posix.dirname(args.importer) : '.';
        const joined = posix.normalize(posix.join(from, args.path));
        if (joined.startsWith('../')) return { errors: [{ text: `cannot import "${args.path}": it leaves the upload` }] };
        const found = [joined, `${joined}.js`, `${joined}.mjs`, `${joined}/index.js`].find((name) => byName.has(name));
        if (found === undefined) return { errors: [{ text: `cannot import "${args.path}": no uploaded module is named ${joined}` }] };
        // WebAssembly stays a module of its own (workerd compiles it); its import names it from the bundle's folder.
        if (found.endsWith('.wasm')) return { path: `./${found}`, external: true };
        return { path: found, namespace: 'upload' };
      });
      on.onLoad({ filter: /.*/, namespace: 'platform' }, (args) => ({
        contents:
          args.path === 'platform:entry'
            ? entrySource(artifact.main_module)
            : preludeSource({ lineChars: hostedLimits.logLineChars, linesPerCall: hostedLimits.logLinesPerCall }),
        loader: 'js',
      }));
      on.onLoad({ filter: /.*/, namespace: 'upload' }, (args) => ({ contents: byName.get(args.path)?.content ?? '', loader: 'js' }));
    },
  };
  try {
    const result = await build({
      entryPoints: ['platform:entry'],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      conditions: ['workerd', 'worker', 'browser'],
      logLevel: 'silent',
      plugins: [plugin],
    });
    return { ok: true, bundle: result.outputFiles[0]?.text ?? '' };
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    if (!Array.isArray(errors)) return { ok: false, reason: `the build failed: ${(error as Error).message}` };
    return { ok: false, reason: errors.slice(0, 5).map(describeMessage).join('\n') };
  }
}

function describeMessage(message: Message): string {
  const at = message.location;
  if (!at) return message.text;
  return `${at.file.replace(/^upload:/, '')}:${at.line}:${at.column + 1}: ${message.text}\n    ${at.lineText.trim()}`;
}
