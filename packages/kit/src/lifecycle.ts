import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export interface RunningService {
  url: string;
  /** Stops accepting, lets in-flight requests finish, then runs the shutdown steps in order. */
  stop(): Promise<void>;
}

/**
 * Listens and installs graceful shutdown on SIGINT/SIGTERM: stop accepting, finish in-flight work,
 * run `shutdownSteps` (release claims, close the database). A second signal exits at once.
 *
 * @example await serve(app, { host, port, logger, shutdownSteps: [() => dispatcher.stop(), () => database.close()] })
 */
export async function serve(
  app: FastifyInstance,
  options: { host: string; port: number; logger: Logger; shutdownSteps: ReadonlyArray<() => Promise<void>>; handleSignals?: boolean },
): Promise<RunningService> {
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await app.close();
      for (const step of options.shutdownSteps) {
        try {
          await step();
        } catch (error) {
          options.logger.error({ err: error }, 'shutdown step failed');
        }
      }
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
