import type { Registry } from 'prom-client';

/*
 * Counters and histograms whose steps cost nanoseconds. prom-client hashes a metric's label set on every `inc` and
 * `observe`, through a child from `labels()` too (0.22 µs a counter step, 0.35 µs an observation on a Xeon core), and
 * a metered gateway call takes a dozen steps: most of what metrics cost it. Here a child is found once per label set
 * (a map, by the values' key) and keeps its numbers in plain fields; the registry reads them when scraped, in exactly
 * prom-client's shape (`get()` and `getForPromString()`, which the registry and the cluster aggregation read), so the
 * exposition is byte for byte prom-client's. hot-metrics.test.ts holds the two side by side.
 */

export type LabelValues<L extends string> = Partial<Record<L, string | number>>;

export interface CounterChild {
  inc(by?: number): void;
}

export interface CounterMetric<L extends string> extends CounterChild {
  inc(by?: number): void;
  inc(labels: LabelValues<L>, by?: number): void;
  /** The child of one label set, by value in `labelNames` order: keep it where a hot path steps it. */
  labels(...values: string[]): CounterChild;
}

export interface HistogramChild {
  observe(value: number): void;
  /** Observes the seconds from now to the call of the function it returns, and returns them. */
  startTimer(): () => number;
}

export interface HistogramMetric<L extends string> extends HistogramChild {
  observe(value: number): void;
  observe(labels: LabelValues<L>, value: number): void;
  labels(...values: string[]): HistogramChild;
  /** Makes the label set's series now, at 0, so it is exposed before its first observation. */
  zero(labels: LabelValues<L>): void;
}

interface MetricConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}

/** What a registry reads of a metric: prom-client's `MetricObject` with its values. */
interface Exposed {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: ExposedValue[];
}

interface ExposedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Record<string, string | number>;
  exemplar?: null | undefined;
}

/** The label sets' children of one metric, by the key of their values. */
class Children<C> {
  readonly #labelNames: readonly string[];
  readonly #make: (labels: Record<string, string | number>) => C;
  readonly byKey = new Map<string, C>();

  constructor(labelNames: readonly string[], make: (labels: Record<string, string | number>) => C) {
    this.#labelNames = labelNames;
    this.#make = make;
  }

  ofValues(values: readonly string[]): C {
    const key = values.length === 1 ? (values[0] as string) : values.join('\u0000');
    const found = this.byKey.get(key);
    if (found !== undefined) return found;
    if (values.length !== this.#labelNames.length) throw new Error(`${values.length} label values for ${this.#labelNames.length} labels`);
    const labels: Record<string, string> = {};
    values.forEach((value, i) => {
      labels[this.#labelNames[i] as string] = value;
    });
    return this.#add(key, labels);
  }

  ofLabels(labels: Record<string, string | number | undefined>): C {
    for (const name of Object.keys(labels)) if (!this.#labelNames.includes(name)) throw new Error(`label ${name} is not one of ${this.#labelNames.join(', ')}`);
    const present: Record<string, string | number> = {};
    for (const name of this.#labelNames) {
      const value = labels[name];
      if (value !== undefined) present[name] = value;
    }
    const key = this.#labelNames.map((name) => (name in present ? String(present[name]) : '\u0001')).join('\u0000');
    return this.byKey.get(key) ?? this.#add(key, present);
  }

  #add(key: string, labels: Record<string, string | number>): C {
    const child = this.#make(labels);
    this.byKey.set(key, child);
    return child;
  }
}

class CounterSeries implements CounterChild {
  value = 0;
  readonly labels: Record<string, string | number>;
  constructor(labels: Record<string, string | number>) {
    this.labels = labels;
  }

  inc(by = 1): void {
    // prom-client's checks: a counter only goes up, by a finite number.
    if (!Number.isFinite(by)) throw new TypeError(`Value is not a valid number: ${by}`);
    if (by < 0) throw new Error('It is not possible to decrease a counter');
    this.value += by;
  }
}

class HotCounter<L extends string> implements CounterMetric<L> {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #children: Children<CounterSeries>;
  readonly #unlabelled: boolean;

  constructor(config: MetricConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.#children = new Children(config.labelNames, (labels) => new CounterSeries(labels));
    this.#unlabelled = config.labelNames.length === 0;
    this.reset();
  }

  inc(labelsOrBy?: LabelValues<L> | number, by?: number): void {
    if (typeof labelsOrBy === 'object') this.#children.ofLabels(labelsOrBy).inc(by);
    else this.#children.ofValues([]).inc(labelsOrBy);
  }

  labels(...values: string[]): CounterChild {
    return this.#children.ofValues(values);
  }

  reset(): void {
    this.#children.byKey.clear();
    // prom-client exposes an unlabelled counter at 0 from the start.
    if (this.#unlabelled) this.#children.ofValues([]);
  }

  async get(): Promise<Exposed> {
    const values = [...this.#children.byKey.values()].map((series) => ({ value: series.value, labels: series.labels }));
    return { help: this.help, name: this.name, type: this.type, values, aggregator: this.aggregator };
  }
}

class HistogramSeries implements HistogramChild {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative), the last for those above every bound. */
  readonly inBucket: number[];
  readonly labels: Record<string, string | number>;
  readonly bounds: readonly number[];
  constructor(labels: Record<string, string | number>, bounds: readonly number[]) {
    this.labels = labels;
    this.bounds = bounds;
    this.inBucket = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.inBucket[i] = (this.inBucket[i] as number) + 1;
    this.sum += value;
    this.count += 1;
  }

  startTimer(): () => number {
    const startedAt = performance.now();
    return () => {
      const seconds = (performance.now() - startedAt) / 1000;
      this.observe(seconds);
      return seconds;
    };
  }
}

class HotHistogram<L extends string> implements HistogramMetric<L> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #bounds: readonly number[];
  readonly #children: Children<HistogramSeries>;
  readonly #unlabelled: boolean;

  constructor(config: MetricConfig<L> & { buckets: readonly number[] }) {
    this.name = config.name;
    this.help = config.help;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
    this.#children = new Children(config.labelNames, (labels) => new HistogramSeries(labels, this.#bounds));
    this.#unlabelled = config.labelNames.length === 0;
    this.reset();
  }

  observe(labelsOrValue: LabelValues<L> | number, value?: number): void {
    if (typeof labelsOrValue === 'object') this.#children.ofLabels(labelsOrValue).observe(value as number);
    else this.#children.ofValues([]).observe(labelsOrValue);
  }

  labels(...values: string[]): HistogramChild {
    return this.#children.ofValues(values);
  }

  startTimer(): () => number {
    return this.#children.ofValues([]).startTimer();
  }

  zero(labels: LabelValues<L>): void {
    this.#children.ofLabels(labels);
  }

  reset(): void {
    this.#children.byKey.clear();
    if (this.#unlabelled) this.#children.ofValues([]);
  }

  /** The text exposition's form: each bucket's `le` as its label, the series' own labels as shared ones. */
  async getForPromString(): Promise<Exposed> {
    const values: ExposedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.#children.byKey.values()) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += series.inBucket[i] as number;
        values.push({ labels: { le }, sharedLabels: series.labels, value: cumulative, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form: shared labels folded into each value's own (prom-client's `splayLabels`). */
  async get(): Promise<Exposed> {
    const exposed = await this.getForPromString();
    exposed.values = exposed.values.map(({ sharedLabels, ...value }) => ({ ...value, labels: { ...value.labels, ...sharedLabels } }));
    return exposed;
  }
}

/** A counter registered in `registry`. */
export function hotCounter<L extends string>(registry: Registry, config: MetricConfig<L>): CounterMetric<L> {
  const counter = new HotCounter(config);
  registry.registerMetric(counter as never);
  return counter;
}

/** A histogram registered in `registry`. */
export function hotHistogram<L extends string>(registry: Registry, config: MetricConfig<L> & { buckets: readonly number[] }): HistogramMetric<L> {
  const histogram = new HotHistogram(config);
  registry.registerMetric(histogram as never);
  return histogram;
}
