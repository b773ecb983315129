import { identityKeyNear, intentFolders, verifyIntentFolder } from '../../services/daemon/src/journal/verify-folder.ts';

/**
 * `platform journal verify <folder> [--public-key <hex>]`: checks intent journals offline. The folder is one intent's
 * (`journal/<id>`), a journal, or a daemon's data folder. The key is `--public-key`, else DAEMON_PUBLIC_KEY, else the
 * `identity.json` beside the journal (said so, since a key kept with the data proves less than one obtained apart).
 * Prints one line per intent; exit 0 when all verify, 1 when one does not, 2 for a usage error.
 */
export async function journalCommand(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  const [verb, folder, ...rest] = args;
  if (verb !== 'verify' || folder === undefined) return usage('journal takes: verify <folder> [--public-key <hex>]');
  let publicKey = env.DAEMON_PUBLIC_KEY || undefined;
  for (let index = 0; index < rest.length; index++) {
    if (rest[index] === '--public-key' && rest[index + 1] !== undefined) publicKey = rest[++index];
    else return usage(`unexpected argument "${rest[index]}"`);
  }
  if (publicKey === undefined) {
    const found = await identityKeyNear(folder);
    if (found === undefined) return usage('no public key: pass --public-key <hex> (or DAEMON_PUBLIC_KEY); no identity.json was found beside the journal');
    console.error(`journal: using the public key in ${found.path} (pass --public-key to check against a key obtained separately)`);
    publicKey = found.publicKeyHex;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(publicKey)) return usage('the public key must be 64 hex characters');
  let folders: string[];
  try {
    folders = await intentFolders(folder);
  } catch (error) {
    console.error(`journal: cannot read ${folder}: ${(error as Error).message}`);
    return 2;
  }
  if (folders.length === 0) {
    console.error(`journal: no intent journals in ${folder}`);
    return 1;
  }
  let bad = 0;
  for (const intent of folders) {
    const verdict = await verifyIntentFolder(intent, publicKey.toLowerCase());
    if (verdict.ok) console.log(`ok   ${verdict.intentId}  ${verdict.count} envelopes, last ${verdict.lastKind}`);
    else {
      bad++;
      console.log(`BAD  ${verdict.intentId}  envelope ${verdict.bad?.seq} (${verdict.bad?.file}): ${verdict.bad?.reason}`);
    }
  }
  return bad === 0 ? 0 : 1;
}

function usage(problem: string): number {
  console.error(`platform journal: ${problem}`);
  return 2;
}
