/** Placeholder while the view is built. */
export function MemoriesView() {
  return <p class="muted">Coming soon.</p>;
}
