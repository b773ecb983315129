import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { hotCounter, hotHistogram } from './hot-metrics.ts';

/*
 * The kit's counters and histograms against prom-client's own, fed the same steps: what Prometheus scrapes (the text)
 * and what a parent sums (the JSON, aggregated as settlement's threads are) must be the same, byte for byte.
 */

const buckets = [0.001, 0.01, 0.1, 1];
const observations = [0.0005, 0.001, 0.002, 0.05, 0.1, 0.5, 2, 30, 0];

function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const config = { name: 'demo_calls_total', help: 'Calls, by model and outcome', labelNames: ['model', 'outcome'] as const };
  const timing = { name: 'demo_duration_seconds', help: 'Latency', labelNames: ['model'] as const, buckets };
  const plain = { name: 'demo_plain_seconds', help: 'No labels', labelNames: [] as const, buckets };
  return {
    theirs,
    ours,
    counters: [new Counter({ ...config, labelNames: [...config.labelNames], registers: [theirs] }), hotCounter(ours, config)] as const,
    histograms: [new Histogram({ ...timing, labelNames: [...timing.labelNames], registers: [theirs] }), hotHistogram(ours, timing)] as const,
    plains: [new Histogram({ ...plain, labelNames: [], registers: [theirs] }), hotHistogram(ours, plain)] as const,
    unlabelled: [
      new Counter({ name: 'demo_plain_total', help: 'No labels', registers: [theirs] }),
      hotCounter(ours, { name: 'demo_plain_total', help: 'No labels', labelNames: [] }),
    ] as const,
  };
}

describe('hot counters and histograms expose what prom-client exposes', () => {
  test('the same steps give the same text and the same JSON, before any step and after', async () => {
    const { theirs, ours, counters, histograms, plains, unlabelled } = both();
    assert.equal(await ours.metrics(), await theirs.metrics(), 'before any step (an unlabelled series is at 0 from the start)');
    for (const counter of counters) {
      counter.labels('m1', 'ok').inc();
      counter.labels('m1', 'ok').inc(2.5);
      counter.inc({ model: 'm2', outcome: 'failed' });
      counter.inc({ outcome: 'partial' }, 3);
      counter.labels('m1', 'refused').inc(0);
    }
    for (const histogram of histograms) {
      for (const value of observations) histogram.labels('m1').observe(value);
      histogram.observe({ model: 'm2' }, 0.003);
      histogram.zero({ model: 'm3' });
    }
    for (const plain of plains) for (const value of observations) plain.observe(value);
    for (const counter of unlabelled) counter.inc(4);
    assert.equal(await ours.metrics(), await theirs.metrics());
    assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
    const summed = (registry: Registry) => registry.getMetricsAsJSON().then((json) => AggregatorRegistry.aggregate([json, json]).metrics());
    assert.equal(await summed(ours), await summed(theirs), 'two threads summed');
    assert.match(await ours.metrics(), /demo_duration_seconds_bucket\{le="0.01",model="m1"\} 4\n/);
    assert.match(await ours.metrics(), /demo_calls_total\{model="m1",outcome="ok"\} 3.5\n/);
  });

  test('a timer observes the seconds it measured', async () => {
    const ours = new Registry();
    const histogram = hotHistogram(ours, { name: 'demo_timed_seconds', help: 'Timed', labelNames: [], buckets });
    const seconds = histogram.startTimer()();
    assert.ok(seconds >= 0 && seconds < 1);
    assert.match(await ours.metrics(), /demo_timed_seconds_count 1\n/);
  });

  test('refuses what prom-client refuses: a counter going down, a value that is not a number, a label it does not have', () => {
    const { counters, histograms } = both();
    const [theirCounter, ourCounter] = counters;
    const [theirHistogram, ourHistogram] = histograms;
    for (const counter of [theirCounter, ourCounter]) {
      assert.throws(() => counter.labels('m1', 'ok').inc(-1), /not possible to decrease a counter/);
      assert.throws(() => counter.labels('m1', 'ok').inc(Number.POSITIVE_INFINITY), /not a valid number/);
      assert.throws(() => counter.labels('m1'), /label/i);
      assert.throws(() => counter.inc({ region: 'eu' } as never), /label/i);
    }
    for (const histogram of [theirHistogram, ourHistogram]) assert.throws(() => histogram.labels('m1').observe(Number.NaN), /not a valid number/);
  });
});
