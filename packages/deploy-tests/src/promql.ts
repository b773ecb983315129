import { parser } from '@prometheus-io/lezer-promql';

/** A metric a query selects, with the label names its matchers use. */
export interface Selected {
  metric: string;
  labels: string[];
}

/** Grafana's variables as a value PromQL parses: intervals as a duration, anything else as a plain word. */
function withoutGrafanaVariables(query: string): string {
  return query.replace(/\$__(?:rate_interval|interval|range)\b/g, '5m').replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, 'x');
}

/**
 * The metrics a PromQL expression selects (each vector selector's metric name and matcher labels), parsed with
 * Prometheus' own grammar (@prometheus-io/lezer-promql, what Prometheus' UI parses with). Throws on a syntax error, so
 * a dashboard with broken PromQL fails the check rather than naming nothing.
 */
export function selectedMetrics(expression: string): Selected[] {
  const query = withoutGrafanaVariables(expression);
  const tree = parser.parse(query);
  const found: Selected[] = [];
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) throw new Error(`PromQL does not parse at ${cursor.from}: ${query}`);
    if (cursor.name !== 'VectorSelector') continue;
    const node = cursor.node;
    const identifier = node.getChild('Identifier');
    const matchers = node.getChild('LabelMatchers');
    const labels = (matchers?.getChildren('UnquotedLabelMatcher') ?? []).map((matcher) => {
      const name = matcher.getChild('LabelName');
      return name ? query.slice(name.from, name.to) : '';
    });
    if (identifier) found.push({ metric: query.slice(identifier.from, identifier.to), labels });
  } while (cursor.next());
  return found;
}

/** The metric of a Grafana `label_values(<metric>, <label>)` variable query. */
export function labelValuesMetric(query: string): Selected | undefined {
  const match = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query.trim());
  return match ? { metric: match[1] as string, labels: [match[2] as string] } : undefined;
}
