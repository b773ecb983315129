import assert from 'node:assert/strict';

/** One sample line of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of the exposition (comments skipped). */
export function samples(text: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = sampleLine.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(labelPair)) labels[name as string] = (value as string).replace(/\\(.)/g, '$1');
    found.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return found;
}

/**
 * The value of the one sample named `name` whose labels include `labels`; undefined when there is none.
 *
 * @example assert.equal(sampleValue(text, 'router_wakes_total', { outcome: 'ready' }), 1)
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = samples(text).filter((sample) => sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value));
  assert.ok(matching.length <= 1, `${name} ${JSON.stringify(labels)} names ${matching.length} series`);
  return matching[0]?.value;
}

/** What an unbounded label value looks like: a DID, a UUID, a URL, a long hex id, an email address. */
const unbounded: ReadonlyArray<[string, RegExp]> = [
  ['a DID', /\bdid:[a-z0-9]+:/i],
  ['a UUID', /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i],
  ['a URL', /^[a-z][a-z0-9+.-]*:\/\/|^\/\//i],
  ['a hex id', /[0-9a-f]{17,}/i],
  ['an email address', /[^\s@]+@[^\s@]+\.[^\s@]+/],
];

/** Fails when a label value of the exposition looks unbounded (the kit's label policy, observability/metrics.ts). */
export function assertBoundedLabels(text: string): void {
  for (const sample of samples(text))
    for (const [label, value] of Object.entries(sample.labels))
      for (const [what, pattern] of unbounded) assert.doesNotMatch(value, pattern, `${sample.name}{${label}="${value}"} holds ${what}`);
}
