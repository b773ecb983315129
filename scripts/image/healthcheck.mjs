// The image's HEALTHCHECK and the chart's probes: GET /healthz on the port the service listens on in the container
// (PORT, 8080 unless set; the router's public listener is ROUTER_ADDR's port). Exit 0 on 200 within 3 s, else 1.
// `healthcheck.mjs sequencer` (settlement's readiness in the chart) also asks /v1/info that this instance is the
// sequencer, so the Service sends traffic to the one instance that writes and a standby stays out until it takes over.
const fromAddress = process.env.ROUTER_ADDR?.match(/:(\d+)$/)?.[1];
const base = `http://127.0.0.1:${fromAddress ?? process.env.PORT ?? '8080'}`;
const get = (path) => fetch(`${base}${path}`, { signal: AbortSignal.timeout(3000) });
try {
  if ((await get('/healthz')).status !== 200) process.exit(1);
  if (process.argv[2] === 'sequencer') {
    const info = await (await get('/v1/info')).json();
    if (info?.data?.role !== 'sequencer') process.exit(1);
  }
  process.exit(0);
} catch {
  process.exit(1);
}
