import assert from 'node:assert/strict';

/** One sample line of a Prometheus text exposition: `name{label="value",…} 12`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition (comments skipped), label values unescaped. */
export function parseMetricsText(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    const match = sampleLine.exec(line);
    if (match === null || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(labelPair))
      labels[name as string] = (value as string).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The sum of the samples named `name` whose labels include `labels`; undefined when none matches.
 *
 * @example metricValue(text, 'connector_tool_calls_total', { tool: 'calendar_list', outcome: 'ok' })
 */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = parseMetricsText(text).filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return matching.length === 0 ? undefined : matching.reduce((sum, sample) => sum + sample.value, 0);
}

/**
 * The value of the one sample named `name` whose labels include `labels` (fails when several match); undefined when
 * none does.
 *
 * @example assert.equal(sampleValue(text, 'router_wakes_total', { outcome: 'ready' }), 1)
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = parseMetricsText(text).filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  assert.ok(matching.length <= 1, `${name} ${JSON.stringify(labels)} names ${matching.length} series`);
  return matching[0]?.value;
}

/** How much a sample moved between two scrapes (an absent one counts as 0): what was done between them. */
export function metricDeltas(before: string, after: string): (name: string, labels?: Record<string, string>) => number {
  return (name, labels = {}) => (metricValue(after, name, labels) ?? 0) - (metricValue(before, name, labels) ?? 0);
}

/** An app `GET /metrics` can be injected into (a Fastify instance). */
interface Injectable {
  inject(options: { method: 'GET'; url: string; headers: Record<string, string> }): PromiseLike<{ statusCode: number; body: string }>;
}

/**
 * `GET /metrics` on an app with `authorization` (null sends none): its status and the exposition text.
 *
 * @example const { status, text } = await scrapeMetrics(app, `Bearer ${metricsToken}`)
 */
export async function scrapeMetrics(app: Injectable, authorization: string | null): Promise<{ status: number; text: string }> {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers: authorization === null ? {} : { authorization } });
  return { status: response.statusCode, text: response.body };
}

/** Every one of `authorizations` (null: none) is refused: 401 in the kit's envelope, `unauthorized`. */
export async function assertScrapeRefused(
  scrape: (authorization: string | null) => Promise<{ status: number; text: string }>,
  authorizations: readonly (string | null)[],
): Promise<void> {
  for (const authorization of authorizations) {
    const scraped = await scrape(authorization);
    assert.equal(scraped.status, 401, `with ${authorization}`);
    assert.equal(JSON.parse(scraped.text).error.code, 'unauthorized');
  }
}

/** Each of `names` is declared (`# TYPE`), counted yet or not: what dashboards and alerts name exists. */
export function assertDeclared(text: string, names: readonly string[]): void {
  for (const name of names) assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is not in /metrics`);
}

/** The metric families the exposition declares (`# TYPE <name> <type>`). */
export function metricFamilies(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name as string, type as string]));
}

const unbounded: readonly [string, RegExp][] = [
  ['a DID', /\bdid:[a-z0-9]+:/i],
  ['a UUID', /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i],
  ['a URL', /^[a-z][a-z0-9+.-]*:\/\/|^\/\//i],
  ['a hex id', /(?:0x)?[0-9a-f]{17,}/i],
  ['an email address', /[^@\s]+@[^@\s]+\.[^@\s]+/],
];

/** Fails when a label value looks like something no label may carry (kit observability/metrics.ts, Labels). */
export function assertBoundedLabels(text: string): void {
  for (const sample of parseMetricsText(text))
    for (const [label, value] of Object.entries(sample.labels))
      for (const [what, pattern] of unbounded)
        assert.doesNotMatch(value, pattern, `${sample.name}{${label}="${value}"} carries ${what}: an unbounded label value`);
}
