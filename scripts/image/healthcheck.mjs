// The image's HEALTHCHECK: GET /healthz on the port the service listens on in the container (PORT, 8080 unless set;
// the router's public listener is ROUTER_ADDR's port). Exit 0 on 200 within 3 s, else 1.
const fromAddress = process.env.ROUTER_ADDR?.match(/:(\d+)$/)?.[1];
const port = fromAddress ?? process.env.PORT ?? '8080';
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
