import { maxPathParamLength } from '@platform/kit/http/create-app';
import type { OpenApiDocument } from '@platform/kit/http/openapi';
import { type Dispatcher, request } from 'undici';
import { type Answer, type Finding, judge } from './answers.ts';
import { type CaseOptions, casesFor, credentialsFor, type SweepCase } from './cases.ts';
import { operationsOf, type SweepOperation } from './operations.ts';
import type { Samples } from './values.ts';

export type { Finding } from './answers.ts';

export interface SweepOptions {
  /** The service's base URL (one listener; a service with two is swept once per listener). */
  url: string;
  /** Headers that satisfy each security scheme of the document, by scheme name: `{ transportBearer: { authorization: 'Bearer …' } }`. */
  credentials: CaseOptions['credentials'];
  /** Valid values by member or parameter name (a known DID, an existing id), so requests get past the first check. */
  samples?: Samples;
  /**
   * A body each operation accepts, by `METHOD /path`, where its schema cannot say what goes together (a once alarm's
   * delay): the members are changed one at a time from it, so each bad value reaches what lies past validation.
   */
  bodies?: Readonly<Record<string, unknown>>;
  seed?: number;
  /** `METHOD /path` → why it is not sent (`POST /shutdown` would end the sweep). */
  skip?: Readonly<Record<string, string>>;
  /** `METHOD /path STATUS` → why that 5xx is not a caller's mistake here (a dependency the sweep does not start). */
  allowedFailures?: Readonly<Record<string, string>>;
  /** Routes that check a proof in their body (default: the DID handshake's and developer sign-in's verify steps). */
  proofRoutes?: readonly string[];
  /** Per operation, how many cases beyond the ones that must be refused (default 40). */
  maxOpenCases?: number;
  /** An answer slower than this is a hang (default 15 s). */
  timeoutMs?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Whether the service process is still running (checked after the sweep, with /healthz). */
  alive?: () => boolean;
}

const defaultProofRoutes = ['POST /v1/agent/auth/verify', 'POST /v1/developers/auth'];

export interface SweepReport {
  operations: number;
  requests: number;
  findings: Finding[];
}

/**
 * The malformed-input sweep: reads the service's own `/openapi.json`, sends every operation generated bad input
 * (wrong types, missing members, edge numbers, NUL bytes and lone surrogates, deep nesting, long path parameters, wrong
 * content types, no or wrong credentials), deterministic by seed, and reports every answer that is a 5xx for a caller's
 * mistake, outside the declared envelope, an acceptance of what must be refused, a protected route answering without
 * credentials, a route asking for credentials, headers or a body its document does not declare, a hang, and a service
 * that is gone afterwards. The document is checked too: every path parameter bounded, every scheme defined.
 *
 * @example const report = await sweepService({ url: service.url, credentials }); assert.deepEqual(formatFindings(report), [])
 */
export async function sweepService(options: SweepOptions): Promise<SweepReport> {
  const document = (await (await fetch(`${options.url}/openapi.json`)).json()) as OpenApiDocument;
  const findings: Finding[] = documentFindings(document);
  const schemes = document.components?.securitySchemes ?? {};
  const declaredHeaders = new Set(Object.values(schemes).flatMap((scheme) => (scheme.type === 'apiKey' ? [scheme.name.toLowerCase()] : ['authorization'])));
  const rules = { allowedFailures: options.allowedFailures ?? {}, declaredHeaders, proofRoutes: new Set(options.proofRoutes ?? defaultProofRoutes) };
  const caseOptions: CaseOptions = {
    credentials: options.credentials,
    samples: options.samples ?? {},
    bodies: options.bodies ?? {},
    seed: options.seed ?? 1,
    maxOpenCases: options.maxOpenCases ?? 40,
  };
  const operations = operationsOf(document).filter((operation) => options.skip?.[operation.id] === undefined);
  const cases: SweepCase[] = [];
  for (const operation of operations) {
    if (credentialsFor(operation, options.credentials) === undefined) {
      findings.push({
        operation: operation.id,
        case: 'credentials',
        problem: `the sweep holds no credentials for ${JSON.stringify(operation.security)}`,
        evidence: '',
      });
      continue;
    }
    cases.push(...casesFor(operation, caseOptions));
  }
  const timeoutMs = options.timeoutMs ?? 15_000;
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      const sent = cases[index] as SweepCase;
      const answer = await send(options.url, sent, timeoutMs);
      const problems = typeof answer === 'string' ? [answer] : judge(sent, answer, rules);
      for (const problem of problems) findings.push({ operation: sent.operation.id, case: sent.label, problem, evidence: evidence(sent, answer) });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  const health = await fetch(`${options.url}/healthz`).then(
    (response) => response.status,
    (error: unknown) => String(error),
  );
  if (health !== 200 || options.alive?.() === false)
    findings.push({ operation: 'GET /healthz', case: 'after the sweep', problem: `the service is not healthy after the sweep (${health})`, evidence: '' });
  return { operations: operations.length, requests: cases.length, findings };
}

/** One line per finding, for `assert.deepEqual(formatFindings(report), [])`. */
export function formatFindings(report: SweepReport): string[] {
  return report.findings.map((finding) => `${finding.operation} [${finding.case}]: ${finding.problem}${finding.evidence ? ` — ${finding.evidence}` : ''}`);
}

/** undici rather than fetch: it sends any method (TRACE, a GET with a body) and the URL exactly as written. */
async function send(base: string, sent: SweepCase, timeoutMs: number): Promise<Answer | string> {
  try {
    const response = await request(`${base}${sent.url}`, {
      method: sent.method as Dispatcher.HttpMethod,
      headers: sent.headers,
      ...(sent.body === undefined ? {} : { body: sent.body }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const contentType = String(response.headers['content-type'] ?? '');
    // A stream or a page is not read: its head is the answer (a stream would never end).
    const readBody = sent.method !== 'HEAD' && (response.statusCode >= 400 || contentType.startsWith('application/json'));
    const text = readBody ? await response.body.text() : undefined;
    if (!readBody) response.body.on('error', () => {}).destroy();
    return { status: response.statusCode, contentType, text };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `no answer within ${timeoutMs} ms`;
    return `the request failed: ${code ?? (error as Error).message}`;
  }
}

function evidence(sent: SweepCase, answer: Answer | string): string {
  const body = sent.body === undefined ? '' : ` ${sent.body.length > 120 ? `${sent.body.slice(0, 120)}…` : sent.body}`;
  const url = sent.url.length > 160 ? `${sent.url.slice(0, 160)}…` : sent.url;
  const reply = typeof answer === 'string' ? answer : `${answer.status} ${(answer.text ?? '').slice(0, 200)}`;
  return `${sent.method} ${url}${body} → ${reply}`;
}

/** What the document itself must say: every path parameter bounded within the router's limit, every scheme defined. */
function documentFindings(document: OpenApiDocument): Finding[] {
  const findings: Finding[] = [];
  const schemes = new Set(Object.keys(document.components?.securitySchemes ?? {}));
  for (const operation of operationsOf(document)) {
    for (const parameter of operation.pathParameters)
      if (parameter.name !== '*' && !bounded(parameter.schema))
        findings.push({
          operation: operation.id,
          case: 'document',
          problem: `path parameter ${parameter.name} declares no bound (maxLength up to ${maxPathParamLength}, an enum, a uuid or an integer)`,
          evidence: JSON.stringify(parameter.schema),
        });
    for (const scheme of operation.security.flat())
      if (!schemes.has(scheme)) findings.push({ operation: operation.id, case: 'document', problem: `security scheme ${scheme} is not defined`, evidence: '' });
  }
  return findings;
}

function bounded(schema: SweepOperation['pathParameters'][number]['schema']): boolean {
  if (typeof schema.maxLength === 'number') return schema.maxLength <= maxPathParamLength;
  return Array.isArray(schema.enum) || schema.format === 'uuid' || schema.type === 'integer' || boundedPattern(schema.pattern);
}

/** An anchored pattern without an unbounded repetition (`*`, `+`, `{n,}`) bounds the length: `^[0-9a-f]{64}$`. */
function boundedPattern(pattern: unknown): boolean {
  if (typeof pattern !== 'string' || !pattern.startsWith('^') || !pattern.endsWith('$')) return false;
  const unescaped = pattern.replace(/\\./g, '');
  return !/[*+]|\{\d+,\}/.test(unescaped);
}
