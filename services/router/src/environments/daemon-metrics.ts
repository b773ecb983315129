import { createHmac } from 'node:crypto';
import { childMetrics, summedMetrics } from '@platform/kit/observability/aggregate-metrics';
import type { EnvironmentProvider } from './provider.ts';

/** The metrics a daemon may report: its own, the kit's HTTP ones and its process's. Nothing else is summed. */
const daemonPrefixes = ['daemon_', 'http_', 'process_', 'nodejs_'];
/** At once, so a scrape of many daemons ends within Prometheus' timeout (10 s by default) without a burst of sockets. */
const parallelScrapes = 16;
const scrapeTimeoutMs = 2_000;
const maxAnswerBytes = 1024 * 1024;

/**
 * Each daemon's metrics bearer (its PLATFORM_METRICS_TOKEN): an HMAC of the platform's metrics token and the user id,
 * so a daemon never holds the bearer that reads every service's metrics, and its own opens no other daemon's. The
 * router, which holds the platform's, derives each to scrape them (`/metrics/daemons`).
 */
export function daemonMetricsTokenFor(metricsToken: string): (userId: string) => string {
  return (userId) => createHmac('sha256', metricsToken).update(`platform-daemon-metrics:${userId}`).digest('base64url');
}

/**
 * The metrics of every daemon this router runs, summed into one exposition (kit `summedMetrics`): one series per label
 * set whatever the number of daemons, never a label naming the user. Each daemon's `/metrics` is asked for in JSON with
 * its own bearer; one that does not answer within 2 s (or answers anything but its metrics) is left out and counted in
 * `daemon_scrapes{outcome="failed"}`. Only running daemons are asked: a scrape never wakes an environment, and it is
 * not a request of the user's (the idle reaper does not see it).
 */
export async function scrapeDaemons(provider: EnvironmentProvider, tokenFor: (userId: string) => string): Promise<string> {
  const users = provider.running();
  const parts: Awaited<ReturnType<typeof scrapeOne>>[] = [];
  let next = 0;
  const worker = async () => {
    while (next < users.length) {
      const id = users[next++] as string;
      parts.push(await scrapeOne(provider, id, tokenFor(id)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelScrapes, users.length) }, worker));
  const read = parts.filter((part) => part !== undefined);
  const summed = await summedMetrics(read);
  return `${summed}${scrapeCounts(read.length, parts.length - read.length)}`;
}

async function scrapeOne(provider: EnvironmentProvider, userId: string, token: string) {
  try {
    const address = await provider.address({ id: userId, region: '', environmentId: null, volume: null });
    if (address === undefined) return undefined;
    const answer = await fetch(`${address}/metrics`, {
      headers: { accept: 'application/json', authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(scrapeTimeoutMs),
    });
    const text = await answer.text();
    if (!answer.ok || text.length > maxAnswerBytes) return undefined;
    return childMetrics(JSON.parse(text), daemonPrefixes);
  } catch {
    return undefined;
  }
}

function scrapeCounts(ok: number, failed: number): string {
  return [
    '# HELP daemon_scrapes Daemons this router runs, by whether their metrics were read for this exposition (ok, failed)',
    '# TYPE daemon_scrapes gauge',
    `daemon_scrapes{outcome="ok"} ${ok}`,
    `daemon_scrapes{outcome="failed"} ${failed}`,
    '',
  ].join('\n');
}
