import type { ServiceApp } from '@platform/kit/http/create-app';
import { requireMetricsBearer } from '@platform/kit/observability/http-metrics';
import { daemonMetricsTokenFor, scrapeDaemons } from '../environments/daemon-metrics.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * `GET /metrics/daemons` (internal listener, with PLATFORM_METRICS_TOKEN): the metrics of the daemons this router runs,
 * summed, behind the same bearer as `/metrics`. The daemons listen where Prometheus cannot find them (a port picked at
 * each start, a machine's private address) and a job per user would be a series per user; this is one target.
 */
export function registerDaemonMetricsRoute(app: ServiceApp, deps: RouteDeps): void {
  const token = deps.config.metricsToken;
  if (token === '') return;
  const tokenFor = daemonMetricsTokenFor(token);
  app.get('/metrics/daemons', { schema: { hide: true } }, async (request, reply) => {
    requireMetricsBearer(request, token);
    const text = await scrapeDaemons(deps.provider, tokenFor);
    return reply.type(deps.serviceMetrics.contentType).send(text);
  });
}
