import type { LogLevel } from '@platform/kit/logger';
import type { RateSetting } from '../config.ts';

/** What the sequencer thread hands a front thread when it starts it (workerData). */
export interface FrontSettings {
  logLevel: LogLevel;
  transportToken: string;
  agentAuthSecret: string;
  holdMaxSeconds: number;
  rates: { read: RateSetting; write: RateSetting; auth: RateSetting };
  trustProxy: boolean;
  /** The service's OTEL_* settings: the thread starts its own tracing from them (none: off). */
  tracingEnv?: Record<string, string>;
  /** The sequencer thread serves /metrics (PLATFORM_METRICS_TOKEN set): count this thread's requests for it. */
  countRequests?: boolean;
}

/** A request a front thread does not answer itself, as it arrived. */
export interface RelayedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array | undefined;
  remoteAddress: string;
}

export interface RelayAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Uint8Array;
}

/** The hub writing to an event stream a front thread holds. */
export type StreamNote = { id: number; op: 'write'; chunk: string } | { id: number; op: 'end' } | { id: number; op: 'destroy' };
