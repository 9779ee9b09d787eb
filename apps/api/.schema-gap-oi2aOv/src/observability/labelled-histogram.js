/**
 * A Prometheus histogram for the hot path, registered in a prom-client registry and scraped like any of its
 * metrics (same `_bucket`/`_sum`/`_count` series). prom-client's own Histogram hashes the label object and turns
 * the bucket's bound into a property name on every observation: measured at about 3 us per request in a CPU
 * profile of `{ status }`, 2% of the request. Here a series (two labels, both values chosen by the server) is
 * found by a joined string, and a bucket by index: about 0.1 us.
 */
export class LabelledHistogram {
    name;
    help;
    labelNames;
    upperBounds;
    type = 'histogram';
    aggregator = 'sum';
    series = new Map();
    constructor(name, help, labelNames, upperBounds, registry) {
        this.name = name;
        this.help = help;
        this.labelNames = labelNames;
        this.upperBounds = upperBounds;
        registry.registerMetric(this);
    }
    /** One observation of the series with these label values. */
    observe(first, second, seconds) {
        const key = `${first}\n${second}`;
        let series = this.series.get(key);
        if (!series) {
            const labels = { [this.labelNames[0]]: first, [this.labelNames[1]]: second };
            series = { labels, counts: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
            this.series.set(key, series);
        }
        let bucket = 0;
        while (bucket < this.upperBounds.length && seconds > this.upperBounds[bucket])
            bucket++;
        series.counts[bucket] += 1;
        series.sum += seconds;
        series.count += 1;
    }
    get() {
        const values = [];
        for (const { labels, counts, sum, count } of this.series.values()) {
            let cumulative = 0;
            this.upperBounds.forEach((bound, i) => {
                cumulative += counts[i];
                values.push({ metricName: `${this.name}_bucket`, labels: { le: bound, ...labels }, value: cumulative });
            });
            values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count });
            values.push({ metricName: `${this.name}_sum`, labels, value: sum });
            values.push({ metricName: `${this.name}_count`, labels, value: count });
        }
        return Promise.resolve({
            name: this.name,
            help: this.help,
            type: 'histogram',
            values,
            aggregator: this.aggregator,
            collect: () => undefined,
        });
    }
    reset() {
        this.series.clear();
    }
}
//# sourceMappingURL=labelled-histogram.js.map