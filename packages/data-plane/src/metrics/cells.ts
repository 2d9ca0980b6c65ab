import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration } from 'prom-client';

/**
 * Metric storage for the request path: plain numbers in objects resolved once per label set, so recording is an
 * addition (a bucket search for histograms), never a label hash. prom-client reads them at scrape time through the
 * two metric classes below, and formats them as usual.
 */
export class CounterCell {
  value = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}
}

export class HistogramCell {
  /** observations per bucket (not cumulative); the last slot counts values above every bound */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

type Value = { value: number; labels: Record<string, string | number>; metricName?: string };

/** A prom-client Counter whose series are CounterCells, listed by `cells()` at scrape time. */
export class CellCounter<T extends string> extends Counter<T> {
  constructor(
    config: CounterConfiguration<T>,
    private readonly cells: () => Iterable<CounterCell>,
  ) {
    super(config);
  }

  override async get(): Promise<Awaited<ReturnType<Counter<T>['get']>>> {
    const base = await super.get();
    const values: Value[] = [];
    for (const cell of this.cells()) values.push({ value: cell.value, labels: { ...cell.labels } });
    return { ...base, values: values as typeof base.values };
  }
}

/** A prom-client Histogram whose series are HistogramCells, listed by `cells()` at scrape time. */
export class CellHistogram<T extends string> extends Histogram<T> {
  constructor(
    config: HistogramConfiguration<T>,
    private readonly cells: () => Iterable<HistogramCell>,
  ) {
    super(config);
  }

  private values(): Value[] {
    const values: Value[] = [];
    const name = this.metricName();
    for (const cell of this.cells()) {
      let cumulative = 0;
      for (let i = 0; i < cell.bounds.length; i++) {
        cumulative += cell.counts[i]!;
        values.push({ metricName: `${name}_bucket`, value: cumulative, labels: { ...cell.labels, le: cell.bounds[i]! } });
      }
      values.push({ metricName: `${name}_bucket`, value: cell.count, labels: { ...cell.labels, le: '+Inf' } });
      values.push({ metricName: `${name}_sum`, value: cell.sum, labels: { ...cell.labels } });
      values.push({ metricName: `${name}_count`, value: cell.count, labels: { ...cell.labels } });
    }
    return values;
  }

  private metricName(): string {
    return this.meta().name;
  }

  /** prom-client keeps these on the metric object; its own get() would read its (empty) series store */
  private meta(): Omit<Awaited<ReturnType<Histogram<T>['get']>>, 'values'> {
    return this as unknown as Omit<Awaited<ReturnType<Histogram<T>['get']>>, 'values'>;
  }

  override async get(): Promise<Awaited<ReturnType<Histogram<T>['get']>>> {
    const { name, help, type, aggregator, collect } = this.meta();
    return { name, help, type, aggregator, collect, values: this.values() as Awaited<ReturnType<Histogram<T>['get']>>['values'] };
  }

  /** what prom-client's registry reads when it formats the text output */
  async getForPromString(): Promise<Awaited<ReturnType<Histogram<T>['get']>>> {
    return this.get();
  }
}
