/**
 * The text a key signs to be linked with an agent (`PUT /wake-keys/{did}`, `platform agent use`): it names the agent
 * the link is for, so a signature made for one daemon links the key with no other. In the kit: the daemon checks it and the CLI
 * signs it, and neither imports the other.
 *
 * @example key.sign(wakeKeyMessage(me.did, key.did))
 */
export function wakeKeyMessage(agentDid: string, keyDid: string): string {
  return `platform-daemon-wake-key-v1:${agentDid}:${keyDid}`;
}
