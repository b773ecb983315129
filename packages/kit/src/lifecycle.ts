import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError, type Env } from './config.ts';
import type { ServiceTracing } from './observability/tracing.ts';
import { applyServiceV8Flags } from './v8-flags.ts';

export interface RunningService {
  url: string;
  /** Stops accepting, lets in-flight requests finish, then runs the shutdown steps in order. */
  stop(): Promise<void>;
}

/** What every service's `start` resolves to; `platform up` prints name, url and dataLocation. */
export interface StartedService extends RunningService {
  name: string;
  /** Where the data lives, safe to print: `PGlite in .data/scheduler`, `PostgreSQL host/db (schema x)`. */
  dataLocation: string;
  /** Other addresses it serves that later services may be wired to (the contract engine's local chain RPC). */
  links?: Record<string, string>;
}

/** The entry point each service exports from its `main.ts`. */
export type StartService = (env: Env, options?: { handleSignals?: boolean }) => Promise<StartedService>;

/**
 * Runs a service as the process entry point: a bad setting prints as one line naming it, anything else with its stack.
 *
 * @example if (import.meta.main) runAsMain('scheduler', start)
 */
export function runAsMain(service: string, start: StartService): void {
  applyServiceV8Flags();
  start(process.env).catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `${service}: ${error.message}` : error);
    process.exit(1);
  });
}

/** Who accepts the connections when it is not the app's own server (settlement's front threads, which hand work to the app). */
export interface Listener {
  /** Starts accepting; resolves with the port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting and lets in-flight requests finish. */
  close(): Promise<void>;
}

/**
 * Listens and installs graceful shutdown on SIGINT/SIGTERM: stop accepting, finish in-flight work,
 * run `shutdownSteps` (release claims, close the database). A second signal exits at once.
 *
 * @example await serve(app, { host, port, logger, shutdownSteps: [() => dispatcher.stop(), () => database.close()] })
 */
export async function serve(
  app: FastifyInstance,
  options: {
    host: string;
    port: number;
    logger: Logger;
    shutdownSteps: ReadonlyArray<() => Promise<void>>;
    handleSignals?: boolean;
    /** Accepts instead of the app's server, which then only answers what the listener hands it. */
    listener?: Listener;
    /** The service's tracing: its buffered spans are exported after the last shutdown step (the steps' own spans included). */
    tracing?: ServiceTracing;
  },
): Promise<RunningService> {
  const { listener } = options;
  let port: number;
  if (listener) {
    await app.ready();
    port = await listener.listen(options.host, options.port);
  } else {
    await app.listen({ host: options.host, port: options.port });
    const address = app.server.address();
    port = typeof address === 'object' && address ? address.port : options.port;
  }
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await listener?.close();
      await app.close();
      for (const step of options.shutdownSteps) {
        try {
          await step();
        } catch (error) {
          options.logger.error({ err: error }, 'shutdown step failed');
        }
      }
      await options.tracing?.shutdown().catch((error: unknown) => options.logger.warn({ err: error }, 'could not export the last spans'));
    })();
    return stopping;
  };
  if (options.handleSignals !== false) {
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        options.logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      options.logger.info({ signal }, 'shutting down');
      void stop().then(() => process.exit(0));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return { url, stop };
}

/**
 * Runs housekeeping on a timer that never keeps the process alive; a failure is logged and the next round
 * tries again. Returns the function that stops it.
 *
 * @example const stop = repeatEvery(300_000, () => store.purgeExpired(), logger, 'nonce purge')
 */
export function repeatEvery(intervalMs: number, task: () => Promise<unknown>, logger: Logger, what: string): () => void {
  const timer = setInterval(() => {
    task().catch((error) => logger.warn({ err: error }, `${what} failed`));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
