/** One bar: its label under the axis, its value (a number the chart scales), the value as a person reads it, and both in words. */
export interface Bar {
  label: string;
  value: number;
  text: string;
  title: string;
}

/**
 * A bar chart in plain SVG, with a text alternative: the figure is described for screen readers by its caption and a
 * table of the same numbers (in a `<details>`, so keyboard users who cannot hover a bar read them too), and each bar
 * carries its value as a tooltip.
 */
export function BarChart(props: { bars: Bar[]; caption: string; unit: string; labelHeading: string }) {
  const { bars, caption, unit } = props;
  const width = 600;
  const height = 180;
  const pad = { left: 8, right: 8, top: 10, bottom: 24 };
  const max = Math.max(...bars.map((bar) => bar.value), 0);
  // A few bars stay bar-shaped rather than filling the width. On a wide column the SVG is held by its max-height and
  // drawn from the left (`xMinYMax`), in line with its caption and table, not floating in the middle.
  const slot = bars.length === 0 ? 0 : Math.min(60, (width - pad.left - pad.right) / bars.length);
  const scale = (value: number) => (max === 0 ? 0 : (value / max) * (height - pad.top - pad.bottom));
  return (
    <figure class="chart-figure">
      <svg
        class="chart"
        viewBox={`0 0 ${width} ${height}`}
        preserveAspectRatio="xMinYMax meet"
        role="img"
        aria-label={`${caption}: ${bars.map((bar) => bar.title).join('; ') || 'no data yet'}`}
      >
        <line class="axis" x1={pad.left} x2={width - pad.right} y1={height - pad.bottom} y2={height - pad.bottom} />
        {bars.map((bar, index) => {
          const h = scale(bar.value);
          const x = pad.left + index * slot + slot * 0.15;
          return (
            <g key={bar.label}>
              <rect class="bar" x={x} y={height - pad.bottom - h} width={slot * 0.7} height={h}>
                <title>{bar.title}</title>
              </rect>
              {(bars.length <= 14 || index % Math.ceil(bars.length / 14) === 0) && (
                <text x={x + slot * 0.35} y={height - 8} text-anchor="middle">
                  {bar.label}
                </text>
              )}
            </g>
          );
        })}
        {bars.length === 0 && (
          <text x={width / 2} y={height / 2} text-anchor="middle">
            no data yet
          </text>
        )}
      </svg>
      <figcaption class="muted">
        {caption} ({unit})
      </figcaption>
      {bars.length > 0 && (
        <details class="chart-numbers">
          <summary>The numbers</summary>
          <table data-testid="chart-numbers">
            <caption class="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                <th scope="col">{props.labelHeading}</th>
                <th scope="col" class="num">
                  {unit}
                </th>
              </tr>
            </thead>
            <tbody>
              {bars.map((bar) => (
                <tr key={bar.label}>
                  <th scope="row">{bar.label}</th>
                  <td class="num">{bar.text}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </figure>
  );
}
