import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { ServiceError } from '../errors.ts';

/** Tokens refill continuously at `perSecond` up to `burst`; one request costs one token. */
export interface BucketRate {
  perSecond: number;
  burst: number;
}

export type TakeResult = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  /** Clock milliseconds up to which `tokens` has been refilled. */
  at: number;
}

/**
 * One token bucket per key (a client address), kept in memory and driven by the clock: no timers.
 *
 * @example const buckets = new TokenBuckets({ rate: { perSecond: 100, burst: 200 }, clock }); buckets.take(request.ip)
 */
export class TokenBuckets {
  readonly #rate: BucketRate;
  readonly #clock: Clock;
  readonly #maxKeys: number;
  // Iterates in insertion order; `take` re-inserts the key it touches, so the first entries are the least recently used.
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: { rate: BucketRate; clock: Clock; maxKeys?: number }) {
    const { perSecond, burst } = options.rate;
    if (!isValidRate(options.rate)) throw new Error(`invalid bucket rate ${perSecond}/${burst}: perSecond must be positive, burst a whole number >= 1`);
    this.#rate = options.rate;
    this.#clock = options.clock;
    this.#maxKeys = Math.max(1, options.maxKeys ?? 100_000);
  }

  /** How many keys are tracked; never more than `maxKeys`. */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Spends `count` tokens of `key`'s bucket (all or none), or says how many whole seconds until they are available.
   * More than the burst costs a full bucket, so a request that large can still pass, at the slowest rate.
   */
  take(key: string, count = 1): TakeResult {
    const needed = Math.min(count, this.#rate.burst);
    const now = this.#clock.now().getTime();
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#refill(bucket, now);
      this.#buckets.delete(key);
    } else {
      if (this.#buckets.size >= this.#maxKeys) this.#makeRoom(now);
      bucket = { tokens: this.#rate.burst, at: now };
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= needed) {
      bucket.tokens -= needed;
      return { allowed: true };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((needed - bucket.tokens) / this.#rate.perSecond)) };
  }

  #refill(bucket: Bucket, now: number): void {
    // A clock stepping backwards neither drains nor credits the bucket: the refill goes on from the new time.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.#rate.burst, bucket.tokens + (elapsed / 1000) * this.#rate.perSecond);
    bucket.at = now;
  }

  /**
   * Keeps memory bounded when addresses are plentiful (IPv6 hands a single client millions). A full bucket is
   * equivalent to an absent one, so those go first at no cost to accuracy. If that is not enough, the least recently
   * used buckets go: forgetting a bucket forgives its debt, which only errs toward letting a client through.
   * Either way the map is cut to 90% of the limit, so the linear sweep runs at most once per tenth of `maxKeys`
   * new keys instead of on every request during a flood.
   */
  #makeRoom(now: number): void {
    const target = Math.min(this.#maxKeys - 1, Math.floor(this.#maxKeys * 0.9));
    for (const [key, bucket] of this.#buckets) {
      this.#refill(bucket, now);
      if (bucket.tokens >= this.#rate.burst) this.#buckets.delete(key);
    }
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= target) break;
      this.#buckets.delete(key);
    }
  }
}

/** Takes `count` tokens (default one) of `key`'s bucket in class `className`: here, or in the thread that keeps the buckets. */
export type TakeToken = (className: string, key: string, count?: number) => TakeResult | Promise<TakeResult>;

/**
 * One bucket set per class, in this thread: what `rateLimit` uses unless given another `take`. A service that serves
 * one port from several threads keeps them in one thread and takes from there, so a client's limit is the same
 * whichever thread its connection landed on.
 *
 * @example const take = localBuckets({ read: { perSecond: 100, burst: 200 } }, clock); take('read', '10.0.0.1')
 */
export function localBuckets(classes: Record<string, BucketRate>, clock: Clock): TakeToken {
  const buckets = new Map<string, TokenBuckets>();
  for (const [name, rate] of Object.entries<BucketRate>(classes)) buckets.set(name, new TokenBuckets({ rate, clock }));
  return (className, key, count) => {
    const classBuckets = buckets.get(className);
    if (!classBuckets) throw new Error(`rate limit class ${className} is not configured`);
    return classBuckets.take(key, count);
  };
}

export interface RateLimitOptions<Class extends string> {
  classes: Record<Class, BucketRate>;
  /** The class a request counts against, or undefined for requests that are never limited. */
  classify: (request: FastifyRequest) => NoInfer<Class> | undefined;
  clock: Clock;
  /** Where tokens are taken: `localBuckets(classes, clock)` unless given (another thread's buckets). */
  take?: TakeToken;
}

/**
 * Per-client-address token-bucket rate limiting, one bucket set per class. Refused requests get 429 `rate_limited`
 * with `Retry-After` in seconds. The key is `request.ip`, so Fastify's `trustProxy` decides whether
 * `X-Forwarded-For` counts: without it, every client behind a proxy shares one bucket.
 *
 * Call it before adding any other `onRequest` hook (bearer, principal): hooks run in the order they were added, so a
 * refused request is turned away before any token is verified or any body is read, and a flood costs next to nothing.
 *
 * @example rateLimit(app, { classes: { read: { perSecond: 100, burst: 200 } }, classify: () => 'read', clock })
 */
export function rateLimit<Class extends string>(app: FastifyInstance, options: RateLimitOptions<Class>): void {
  const take = options.take ?? localBuckets(options.classes, options.clock);
  app.decorateRequest('rateLimitExtra', null);
  app.addHook('onRequest', async (request, reply) => {
    const name = options.classify(request);
    if (name === undefined) return;
    const taken = take(name, request.ip);
    const result = taken instanceof Promise ? await taken : taken;
    if (result.allowed) {
      request.rateLimitExtra = async (count) => refuseUnless(reply, name, await take(name, request.ip, count));
      return;
    }
    refuseUnless(reply, name, result);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Takes more tokens for a request that does the work of several (set by `rateLimit` on limited requests). */
    rateLimitExtra: ((count: number) => Promise<void>) | null;
  }
}

/**
 * Charges a request for `count` requests' worth of work once its body says how much it asks for (a batch of items):
 * `count - 1` more tokens of its class, or 429 as a flood of single requests would be. Unlimited requests pay nothing.
 *
 * @example await chargeForItems(request, request.body.items.length)
 */
export async function chargeForItems(request: FastifyRequest, count: number): Promise<void> {
  if (count > 1) await request.rateLimitExtra?.(count - 1);
}

function refuseUnless(reply: FastifyReply, name: string, result: TakeResult): void {
  if (result.allowed) return;
  // The error handler only drops content-type and content-length, so this header reaches the 429.
  reply.header('Retry-After', String(result.retryAfterSeconds));
  throw new ServiceError('rate_limited', `too many ${name} requests from this address; retry after ${result.retryAfterSeconds} s`);
}

/**
 * Reads a rate setting written `<perSecond>/<burst>`, e.g. `100/200` or `0.5/1`: perSecond a positive decimal,
 * burst a whole number of at least 1. Anything else, including surrounding spaces, is undefined.
 *
 * @example parseBucketRate(process.env.SETTLEMENT_RATE_WRITE ?? '100/200')
 */
export function parseBucketRate(text: string): BucketRate | undefined {
  const match = /^(\d+(?:\.\d+)?)\/(\d+)$/.exec(text);
  if (!match) return undefined;
  const rate = { perSecond: Number(match[1]), burst: Number(match[2]) };
  return isValidRate(rate) ? rate : undefined;
}

function isValidRate({ perSecond, burst }: BucketRate): boolean {
  return perSecond > 0 && Number.isFinite(perSecond) && burst >= 1 && Number.isSafeInteger(burst);
}
