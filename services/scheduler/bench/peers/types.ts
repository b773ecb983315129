import type { WakeSink } from '../wake-sink.ts';

export interface PeerOptions {
  /** A database the peer may install its schema into; a fresh one per run keeps runs comparable. */
  databaseUrl: string;
  /** Jobs to schedule. */
  count: number;
  /** 0: all jobs fall due at one instant; otherwise job i is due at due + i * spreadMs / count. */
  spreadMs: number;
  sinkUrl: string;
  sinkToken: string;
  /** The sink behind sinkUrl; the peer resets it and reads lateness from it. */
  sink: WakeSink;
}

export interface PeerResult {
  name: string;
  count: number;
  firesPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU the contender's own process (the bench process) spent per 1,000 fires, from before the due moment to the last receive. */
  processCpuMsPer1k: number;
  /** CPU PostgreSQL's backends serving the contender's database spent per 1,000 fires, over the same window. */
  databaseCpuMsPer1k: number;
}
