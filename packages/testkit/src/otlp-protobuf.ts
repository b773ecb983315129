/*
 * OTLP's protobuf encoding of a trace export (opentelemetry-proto's trace/v1 and common/v1 messages), read as far as
 * a test's collector needs: each span's service, ids, parent, name, kind, attributes and status; or only how many
 * spans there are, for a bench's collector. The field numbers are the .proto files'. An int attribute is read as a
 * non-negative varint: a negative one (ten bytes, two's complement) would read as a huge number; no test sends one.
 */

/** One span as the JSON encoding spells it (ids in hex), so both encodings feed the same reader. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: number; doubleValue?: number; boolValue?: boolean } }[];
  status: { code: number };
  /** The spans this one links to (a batch's, to each item's). */
  links?: { traceId: string; spanId: string }[];
}

export interface DecodedResourceSpans {
  resource: { attributes: DecodedSpan['attributes'] };
  scopeSpans: { spans: DecodedSpan[] }[];
}

interface Field {
  number: number;
  /** A varint's value, a fixed64's 8 bytes read as a double, or undefined for a length-delimited field. */
  value: number | undefined;
  /** A length-delimited field's bytes. */
  bytes: Buffer | undefined;
}

/** The fields of one message, in order. Throws on a wire type OTLP does not use or bytes that end mid-field. */
function* fieldsOf(message: Buffer): Generator<Field> {
  let at = 0;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= message.length) throw new Error('truncated varint');
      const byte = message[at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
  };
  while (at < message.length) {
    const tag = varint();
    const number = Math.floor(tag / 8);
    const wire = tag % 8;
    if (wire === 0) yield { number, value: varint(), bytes: undefined };
    else if (wire === 1) {
      if (at + 8 > message.length) throw new Error('truncated fixed64');
      yield { number, value: message.readDoubleLE(at), bytes: undefined };
      at += 8;
    } else if (wire === 2) {
      const length = varint();
      if (at + length > message.length) throw new Error('truncated field');
      yield { number, value: undefined, bytes: message.subarray(at, at + length) };
      at += length;
    } else if (wire === 5) {
      if (at + 4 > message.length) throw new Error('truncated fixed32');
      at += 4;
    } else throw new Error(`wire type ${wire}`);
  }
}

function each(message: Buffer, number: number, read: (bytes: Buffer) => void): void {
  for (const field of fieldsOf(message)) if (field.number === number && field.bytes !== undefined) read(field.bytes);
}

/** ExportTraceServiceRequest: 1 resource_spans; ResourceSpans: 1 resource, 2 scope_spans; ScopeSpans: 2 spans. */
export function decodeTraceRequest(body: Buffer): DecodedResourceSpans[] {
  const all: DecodedResourceSpans[] = [];
  each(body, 1, (resourceSpans) => {
    const decoded: DecodedResourceSpans = { resource: { attributes: [] }, scopeSpans: [] };
    each(resourceSpans, 1, (resource) => each(resource, 1, (pair) => decoded.resource.attributes.push(keyValue(pair))));
    each(resourceSpans, 2, (scopeSpans) => {
      const spans: DecodedSpan[] = [];
      each(scopeSpans, 2, (span) => spans.push(decodeSpan(span)));
      decoded.scopeSpans.push({ spans });
    });
    all.push(decoded);
  });
  return all;
}

/** How many spans a request holds, without decoding them. */
export function countTraceRequestSpans(body: Buffer): number {
  let count = 0;
  each(body, 1, (resourceSpans) => each(resourceSpans, 2, (scopeSpans) => each(scopeSpans, 2, () => count++)));
  return count;
}

/** Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 13 links (1 trace_id, 2 span_id), 15 status (3 code). */
function decodeSpan(message: Buffer): DecodedSpan {
  const span: DecodedSpan = { traceId: '', spanId: '', name: '', kind: 0, attributes: [], status: { code: 0 } };
  for (const { number, value, bytes } of fieldsOf(message)) {
    if (number === 1 && bytes) span.traceId = bytes.toString('hex');
    else if (number === 2 && bytes) span.spanId = bytes.toString('hex');
    else if (number === 4 && bytes && bytes.length > 0) span.parentSpanId = bytes.toString('hex');
    else if (number === 5 && bytes) span.name = bytes.toString('utf8');
    else if (number === 6 && value !== undefined) span.kind = value;
    else if (number === 9 && bytes) span.attributes.push(keyValue(bytes));
    else if (number === 13 && bytes) {
      const link = { traceId: '', spanId: '' };
      for (const field of fieldsOf(bytes))
        if (field.number === 1 && field.bytes) link.traceId = field.bytes.toString('hex');
        else if (field.number === 2 && field.bytes) link.spanId = field.bytes.toString('hex');
      span.links = [...(span.links ?? []), link];
    } else if (number === 15 && bytes) for (const status of fieldsOf(bytes)) if (status.number === 3) span.status.code = status.value ?? 0;
  }
  return span;
}

/** KeyValue: 1 key, 2 value; AnyValue: 1 string, 2 bool, 3 int, 4 double (arrays, maps and bytes are left out). */
function keyValue(message: Buffer): DecodedSpan['attributes'][number] {
  const pair: DecodedSpan['attributes'][number] = { key: '', value: {} };
  for (const field of fieldsOf(message)) {
    if (field.number === 1 && field.bytes) pair.key = field.bytes.toString('utf8');
    else if (field.number === 2 && field.bytes)
      for (const any of fieldsOf(field.bytes)) {
        if (any.number === 1 && any.bytes) pair.value.stringValue = any.bytes.toString('utf8');
        else if (any.number === 2) pair.value.boolValue = any.value === 1;
        else if (any.number === 3) pair.value.intValue = any.value;
        else if (any.number === 4) pair.value.doubleValue = any.value;
      }
  }
  return pair;
}
