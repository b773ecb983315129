import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const repoNodeModules = join(dirname(require.resolve('hardhat/package.json')), '..');
const soljson = join(dirname(require.resolve('solc/package.json')), 'soljson.js');
const hardhatBin = join(repoNodeModules, '.bin', 'hardhat');

/** Hardhat 3 on the same sources: a throwaway project using the repo's node_modules and solc-js (no download). */
export class HardhatPeer {
  readonly dir: string;
  /** `unshare -n` (a network namespace with no network) when this machine allows it: proof nothing is downloaded. */
  readonly offline: boolean;

  constructor(sources: Record<string, string>) {
    this.dir = mkdtempSync(join(tmpdir(), 'contracts-bench-hardhat-'));
    symlinkSync(repoNodeModules, join(this.dir, 'node_modules'));
    writeFileSync(
      join(this.dir, 'package.json'),
      JSON.stringify({
        name: 'bench',
        private: true,
        type: 'module',
        devDependencies: { hardhat: '3.18.0', '@openzeppelin/contracts': '5.7.0', '@layerzerolabs/toolbox-foundry': '0.1.13' },
      }),
    );
    // solidity.path at solc-js's soljson.js: Hardhat then compiles offline with the same compiler as the engine.
    writeFileSync(
      join(this.dir, 'hardhat.config.ts'),
      `import { defineConfig } from 'hardhat/config';\nexport default defineConfig({\n  solidity: { version: '0.8.37', path: ${JSON.stringify(soljson)} },\n  paths: { sources: 'src', tests: { solidity: 'test' } },\n});\n`,
    );
    writeFileSync(join(this.dir, 'remappings.txt'), 'forge-std/=node_modules/@layerzerolabs/toolbox-foundry/lib/forge-std/\n');
    for (const [path, content] of Object.entries(sources)) {
      mkdirSync(dirname(join(this.dir, path)), { recursive: true });
      writeFileSync(join(this.dir, path), content);
    }
    this.offline = spawnSync('unshare', ['-n', 'true']).status === 0;
  }

  /** Removes Hardhat's artifacts and caches (its compile cache lives in the project). */
  clean(): void {
    for (const folder of ['artifacts', 'cache']) rmSync(join(this.dir, folder), { recursive: true, force: true });
  }

  /** Runs `hardhat <args>` to completion and returns its wall time in ms; throws if it fails. */
  run(args: string[]): number {
    const [command, commandArgs] = this.offline ? ['unshare', ['-n', hardhatBin, ...args]] : [hardhatBin, args];
    const started = performance.now();
    try {
      execFileSync(command as string, commandArgs as string[], { cwd: this.dir, stdio: 'pipe', env: { ...process.env, FORCE_COLOR: '0' } });
    } catch (error) {
      const output = (error as { stdout?: Buffer; stderr?: Buffer }).stdout?.toString() ?? '';
      throw new Error(`hardhat ${args.join(' ')} failed: ${output.slice(-2000)}`, { cause: error });
    }
    return performance.now() - started;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
