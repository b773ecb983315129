/** Placeholder while the view is built. */
export function MarketView() {
  return <p class="muted">Coming soon.</p>;
}
