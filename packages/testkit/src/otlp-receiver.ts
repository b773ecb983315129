import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listenOnFreePort } from './local-server.ts';
import { countTraceRequestSpans, type DecodedResourceSpans, type DecodedSpan, decodeTraceRequest } from './otlp-protobuf.ts';

/** One span as a collector received it, with the `service.name` of the resource it came under. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Undefined for the first span of a trace. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  /** The spans this one links to, by trace and span id. */
  links: { traceId: string; spanId: string }[];
}

/** OTLP span kinds, by name. */
export const spanKinds = { internal: 1, server: 2, client: 3 } as const;

/**
 * A local OTLP/HTTP collector for tests: takes `POST /v1/traces` in either of OTLP's encodings, protobuf (the
 * exporters' default) or JSON, gzip too, answers an empty success in the same encoding, and keeps every span. Point a
 * service at it with `OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url`.
 *
 * @example const receiver = await startOtlpReceiver(); ...; await receiver.waitFor((spans) => spans.some((span) => span.service === 'daemon'), 'a daemon span')
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}) {
  // A bench's receiver counts spans and keeps none: thousands a second for a minute.
  const keep = options.keep ?? true;
  const spans: ReceivedSpan[] = [];
  let received = 0;
  const refused: string[] = [];
  const encodings: Record<string, number> = {};
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      const protobuf = contentType.startsWith('application/x-protobuf');
      const answer = (status: number) =>
        protobuf
          ? response.writeHead(status, { 'content-type': 'application/x-protobuf' }).end()
          : response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      if (request.method !== 'POST' || request.url !== '/v1/traces') return answer(404);
      if (!protobuf && !contentType.startsWith('application/json')) {
        refused.push(`content-type ${contentType}`);
        return answer(415);
      }
      try {
        const raw = Buffer.concat(chunks);
        const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        const encoding = protobuf ? 'protobuf' : 'json';
        encodings[encoding] = (encodings[encoding] ?? 0) + 1;
        if (keep) {
          const batch = spansOf(protobuf ? decodeTraceRequest(body) : (JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest).resourceSpans);
          received += batch.length;
          spans.push(...batch);
        } else received += protobuf ? countTraceRequestSpans(body) : countSpans(body);
        answer(200);
      } catch (error) {
        refused.push(String(error));
        answer(400);
      }
    });
  });
  const { port, close } = await listenOnFreePort(server);
  return {
    /** The collector's root, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds `/v1/traces`). */
    url: `http://127.0.0.1:${port}`,
    spans: (): readonly ReceivedSpan[] => spans,
    /** How many spans arrived, kept or not. */
    received: (): number => received,
    /** How many requests came in each encoding (`protobuf`, `json`). */
    encodings: (): Readonly<Record<string, number>> => encodings,
    /** Requests it could not read (a wrong content type, bad JSON): a test expects none. */
    refused: (): readonly string[] => refused,
    /** Polls (every 50 ms, at most `timeoutMs`) until `check` holds for the spans received so far. */
    async waitFor(check: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs = 30_000): Promise<readonly ReceivedSpan[]> {
      const deadline = Date.now() + timeoutMs;
      while (!check(spans)) {
        if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}; received: ${describeSpans(spans)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close,
  };
}

/**
 * The spans in an OTLP/JSON body without parsing it: every span, and nothing else of the request (resource, scope,
 * status, event, link), has a `kind`. A bench's receiver shares the machine with the service it measures, so it does
 * the least it can: parsing thousands of spans a second would take a share of the two cores from the service.
 */
function countSpans(body: Buffer): number {
  let count = 0;
  for (let at = body.indexOf(spanKindKey); at !== -1; at = body.indexOf(spanKindKey, at + spanKindKey.length)) count++;
  return count;
}

const spanKindKey = Buffer.from('"kind":');

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

/** `service name (kind) trace/span<-parent` per line, for a failure message. */
export function describeSpans(spans: readonly ReceivedSpan[]): string {
  return spans.map((span) => `\n  ${span.service} ${span.name} (${span.kind}) ${span.traceId}/${span.spanId}<-${span.parentSpanId ?? 'root'}`).join('');
}

interface ExportTraceServiceRequest {
  resourceSpans?: DecodedResourceSpans[];
}

function spansOf(resourceSpansList: DecodedResourceSpans[] | undefined): ReceivedSpan[] {
  return (resourceSpansList ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? 'unknown');
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === undefined || span.parentSpanId === '' ? undefined : span.parentSpanId,
        name: span.name,
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes),
        status: span.status?.code ?? 0,
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
      })),
    );
  });
}

function attributesOf(list: DecodedSpan['attributes'] | undefined): Record<string, string | number | boolean> {
  const found: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value?.stringValue !== undefined) found[key] = value.stringValue;
    else if (value?.intValue !== undefined) found[key] = Number(value.intValue);
    else if (value?.doubleValue !== undefined) found[key] = value.doubleValue;
    else if (value?.boolValue !== undefined) found[key] = value.boolValue;
  }
  return found;
}
