import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '@platform/kit/clock';
import { createLogger } from '@platform/kit/logger';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { startTracing } from '@platform/kit/observability/tracing';
import { PortRpc } from '@platform/kit/threads/port-rpc';
import { serviceName } from '../app.ts';
import { buildFrontApp, type FrontStreams } from './front-app.ts';
import type { FrontSettings, StreamNote } from './front-protocol.ts';

/*
 * A front thread (see front-threads.ts): its app, listening on the service's port beside the other front threads
 * (SO_REUSEPORT: the kernel spreads new connections over them), and its link to the sequencer thread.
 */

if (!parentPort) throw new Error('front-thread.ts runs as a worker thread');
const settings = workerData as FrontSettings;
const logger = createLogger({ level: settings.logLevel, service: serviceName });
// This thread's HTTP metrics: the sequencer thread asks for them at each scrape and sums them into its own.
const metrics = createServiceMetrics(serviceName);
const tracing = await startTracing(settings.tracingEnv ?? {}, serviceName);
let streams: FrontStreams | undefined;
const main = new PortRpc(parentPort, {
  listen: async ({ host, port }: { host: string; port: number }) => {
    // reusePort (SO_REUSEPORT) is node's listen option; Fastify passes its options through to it.
    await app.listen({ host, port, reusePort: true } as { host: string; port: number });
    const address = app.server.address();
    return typeof address === 'object' && address ? address.port : port;
  },
  close: async () => {
    await app.close();
    await tracing.shutdown();
  },
  stream: (note: StreamNote) => streams?.receive(note),
  metrics: () => metrics.registry.getMetricsAsJSON(),
});
const built = buildFrontApp({
  logger,
  clock: systemClock,
  main,
  transportToken: settings.transportToken,
  agentAuthSecret: settings.agentAuthSecret,
  holdMaxSeconds: settings.holdMaxSeconds,
  rates: settings.rates,
  trustProxy: settings.trustProxy,
  metrics,
  countRequests: settings.countRequests === true,
  tracing,
});
const app = built.app;
streams = built.streams;
main.notify('ready', null);
