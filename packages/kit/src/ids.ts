import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for ids, filled 4 KiB at a time, as Node's own randomUUID() batches its randomness: one native call
 * per 256 ids instead of one per id. randomBytes(16) per id cost about 2 µs and left a native job object for the
 * young generation's collector to finalise (the gateway makes one id per call); this costs about 0.1 µs.
 */
const randomPool = Buffer.allocUnsafeSlow(4096);
let randomOffset = randomPool.length;

/** Sixteen fresh random bytes in a buffer of their own. */
function random16(): Buffer {
  if (randomOffset + 16 > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  randomPool.copy(bytes, 0, randomOffset, randomOffset + 16);
  randomOffset += 16;
  return bytes;
}

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds then randomness, so ids sort in creation order
 * and index well.
 *
 * @example const id = uuidv7()
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = random16();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

let lastMs = 0;
let sequence = 0;

/**
 * A UUIDv7 that sorts after every id this process made before, even within one millisecond: the 12 bits after
 * the version count up within a millisecond (RFC 9562 method 1), so "newest first" by id matches creation order.
 *
 * @example const id = monotonicUuidv7(clock.now().getTime())
 */
export function monotonicUuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    lastMs++;
    sequence = 0;
  }
  const bytes = random16();
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const lowercaseUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether text is a UUID as we write them (lowercase): check before a uuid column sees it, or PostgreSQL fails the query. */
export function isUuid(text: unknown): text is string {
  return typeof text === 'string' && lowercaseUuid.test(text);
}
