import { seededRandom } from '../seeded-random.ts';
import { compiled } from './answers.ts';
import type { JsonSchema, SweepOperation } from './operations.ts';
import { type BadValue, badBodies, badJsonValues, badMultipartBodies, badUrlValues, memberPaths, type Samples, sampleValue } from './values.ts';

/**
 * What an answer must be: `unauthorized` 401; `refused` a 4xx (the input is wrong whatever the route does); `answered`
 * anything but a 5xx; `public` anything but a 401 (the route declares no credentials, so it must not ask for any).
 */
export type Expectation = 'unauthorized' | 'refused' | 'answered' | 'public';

export interface SweepCase {
  operation: SweepOperation;
  label: string;
  method: string;
  /** Path and query, percent-encoded as sent. */
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  expect: Expectation;
}

export interface CaseOptions {
  /** Headers that satisfy each security scheme by name. */
  credentials: Readonly<Record<string, Readonly<Record<string, string>>>>;
  samples: Samples;
  /** A body the operation accepts, by operation id, where its schema alone cannot say (members that go together). */
  bodies: Readonly<Record<string, unknown>>;
  seed: number;
  /** How many of an operation's cases that need not be refused are sent (chosen by the seed); every certain one is. */
  maxOpenCases: number;
}

/** A body that is not JSON (a multipart upload), given as its bytes and content type, for `bodies`. */
export interface RawBody {
  contentType: string;
  text: string;
}

/** Marks a raw body for the sweep's `bodies`: `bodies: { 'POST /upload': rawBody(contentType, text) }`. */
export const rawBody = (contentType: string, text: string): RawBody => ({ contentType, text });

const isRawBody = (value: unknown): value is RawBody =>
  typeof value === 'object' && value !== null && typeof (value as RawBody).contentType === 'string' && typeof (value as RawBody).text === 'string';

const placeholder = '"__sweep_value__"';
const garbage = 'sweep-not-a-credential';

/** The credentials of the first security alternative this sweep holds every scheme of (undefined when none). */
export function credentialsFor(operation: SweepOperation, credentials: CaseOptions['credentials']): Record<string, string> | undefined {
  if (operation.security.length === 0) return {};
  const usable = operation.security.find((schemes) => schemes.every((scheme) => credentials[scheme] !== undefined));
  return usable ? Object.assign({}, ...usable.map((scheme) => credentials[scheme])) : undefined;
}

/** Every request the sweep sends to one operation, deterministic for a seed. */
export function casesFor(operation: SweepOperation, options: CaseOptions): SweepCase[] {
  const credentials = credentialsFor(operation, options.credentials) ?? {};
  const seed = options.seed;
  const pathValues = Object.fromEntries(
    operation.pathParameters.map((parameter) => [
      parameter.name,
      encodeURIComponent(String(sampleValue(parameter.schema, { seed, samples: options.samples, name: parameter.name }))),
    ]),
  );
  const requiredQuery = operation.query
    .filter((parameter) => parameter.required)
    .map((parameter) => [parameter.name, encodeURIComponent(String(sampleValue(parameter.schema, { seed, samples: options.samples, name: parameter.name })))]);
  // Required headers, and optional ones the sweep has a sample of (the caller's DID where a route wants one).
  const requiredHeaders = Object.fromEntries(
    operation.headers
      .filter((parameter) => parameter.required || parameter.name.toLowerCase() in options.samples)
      .map((parameter) => [parameter.name, String(sampleValue(parameter.schema, { seed, samples: options.samples, name: parameter.name.toLowerCase() }))]),
  );
  const jsonBody = operation.body?.contentType === 'application/json' ? operation.body : undefined;
  const given = options.bodies[operation.id];
  const minimal = jsonBody ? (given ?? sampleValue(jsonBody.schema, { seed, samples: options.samples })) : undefined;
  const full = jsonBody ? sampleValue(jsonBody.schema, { seed, samples: options.samples, full: true }) : undefined;
  const raw = !jsonBody && isRawBody(given) ? given : undefined;

  const make = (
    label: string,
    expect: Expectation,
    change: { path?: Record<string, string>; query?: string[][]; headers?: Record<string, string>; body?: string | null; contentType?: string } = {},
  ): SweepCase => {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => change.path?.[name] ?? pathValues[name] ?? 'x');
    const query = change.query ?? requiredQuery;
    const body = change.body === null ? undefined : (change.body ?? raw?.text ?? (minimal === undefined ? undefined : JSON.stringify(minimal)));
    const headers: Record<string, string> = { ...credentials, ...requiredHeaders, ...change.headers };
    if (body !== undefined) headers['content-type'] = change.contentType ?? (change.body === undefined ? raw?.contentType : undefined) ?? 'application/json';
    const search = query.length === 0 ? '' : `?${query.map(([name, value]) => `${name}=${value}`).join('&')}`;
    return { operation, label, method: operation.method, url: `${path}${search}`, headers, body, expect };
  };
  const bodyExpectation = (text: string, certain: boolean): Expectation => {
    if (certain || !jsonBody?.schema) return certain ? 'refused' : 'answered';
    return bodyMeetsSchema(text, jsonBody.schema) ? 'answered' : 'refused';
  };

  const certain: SweepCase[] = [];
  const open: SweepCase[] = [];
  const add = (item: SweepCase) => (item.expect === 'answered' || item.expect === 'public' ? open : certain).push(item);

  // Credentials: none, then each scheme's wrong.
  // A route with an empty alternative also answers without credentials (the owner sees more with them).
  const optional = operation.security.length === 0 || operation.security.some((schemes) => schemes.length === 0);
  const bare = { ...make('', 'answered'), headers: withoutCredentials(make('', 'answered').headers, credentials) };
  if (operation.security.length === 0) certain.push({ ...bare, label: 'no credentials (the route declares none)', expect: 'public' });
  else certain.push({ ...bare, label: 'no credentials', expect: optional ? 'public' : 'unauthorized' });
  for (const name of Object.keys(credentials)) {
    const wrong = name === 'authorization' ? `${credentials[name]?.split(' ')[0]} ${garbage}` : garbage;
    certain.push(make(`a wrong ${name}`, optional ? 'answered' : 'unauthorized', { headers: { [name]: wrong } }));
  }
  certain.push(make('a valid-looking request', 'answered'));
  if (full !== undefined) certain.push(make('every optional member', 'answered', { body: JSON.stringify(full) }));

  if (jsonBody) {
    for (const member of memberPaths(jsonBody.schema))
      for (const bad of badJsonValues(member.schema)) add(memberCase(make, minimal, full, member, bad, bodyExpectation));
    for (const name of (jsonBody.schema?.required as string[] | undefined) ?? []) {
      const without = { ...(minimal as Record<string, unknown>) };
      delete without[name];
      add(make(`body without the required ${name}`, 'refused', { body: JSON.stringify(without) }));
    }
    const unknown = JSON.stringify({ ...(minimal as object), sweep_unknown_member: 1 });
    add(make('an unknown member', bodyExpectation(unknown, false), { body: unknown }));
    for (const bad of badBodies)
      add(make(`body: ${bad.label}`, bodyExpectation(bad.text, bad.certain), { body: bad.text, ...(bad.contentType ? { contentType: bad.contentType } : {}) }));
  } else if (operation.body?.contentType.startsWith('multipart/form-data')) {
    for (const bad of badMultipartBodies) add(make(`body: ${bad.label}`, 'refused', { body: bad.text, contentType: bad.contentType }));
    if (raw) add(make('body: the upload cut in half', 'refused', { body: raw.text.slice(0, Math.floor(raw.text.length / 2)), contentType: raw.contentType }));
  } else if (operation.body === undefined && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(operation.method))
    add(make('a body the route does not declare', 'refused', { body: '{"sweep_probe":1}' }));

  for (const parameter of operation.pathParameters)
    for (const bad of badUrlValues(parameter.schema, 'path'))
      add(
        make(`path ${parameter.name}: ${bad.label}`, bad.certain && parameter.name !== '*' ? 'refused' : 'answered', { path: { [parameter.name]: bad.text } }),
      );
  for (const parameter of operation.query) {
    const others = (name: string) => (requiredQuery as string[][]).filter(([other]) => other !== name);
    for (const bad of badUrlValues(parameter.schema, 'query'))
      add(
        make(`query ${parameter.name}: ${bad.label}`, bad.certain ? 'refused' : 'answered', { query: [...others(parameter.name), [parameter.name, bad.text]] }),
      );
    add(make(`query ${parameter.name} twice`, 'answered', { query: [...others(parameter.name), [parameter.name, '1'], [parameter.name, '2']] }));
    if (parameter.required) add(make(`query without the required ${parameter.name}`, 'refused', { query: others(parameter.name) }));
  }
  add(make('an unknown query parameter', 'answered', { query: [...(requiredQuery as string[][]), ['sweep_unknown', '1']] }));
  for (const parameter of operation.headers) {
    const name = parameter.name.toLowerCase();
    add(make(`header ${name}: 4,096 characters`, 'answered', { headers: { [name]: 'x'.repeat(4096) } }));
    add(make(`header ${name}: empty`, 'answered', { headers: { [name]: '' } }));
    if (parameter.required) {
      const withoutIt = make(`without the required header ${name}`, 'refused');
      delete withoutIt.headers[name];
      add(withoutIt);
    }
  }
  return [...certain, ...seededPick(open, options.maxOpenCases, seed)];
}

type Make = (label: string, expect: Expectation, change?: { body?: string | null }) => SweepCase;

/** The minimal body with one member (at its path, its parents taken from the full body) set to a bad value. */
function memberCase(
  make: Make,
  minimal: unknown,
  full: unknown,
  member: { path: string[]; schema: JsonSchema },
  bad: BadValue,
  expectation: (text: string, certain: boolean) => Expectation,
): SweepCase {
  const body = structuredClone((minimal ?? {}) as Record<string, unknown>);
  let parent = body;
  let fullParent = (full ?? {}) as Record<string, unknown>;
  for (const name of member.path.slice(0, -1)) {
    const fromFull = fullParent?.[name];
    if (typeof parent[name] !== 'object' || parent[name] === null || Array.isArray(parent[name]))
      parent[name] = typeof fromFull === 'object' && fromFull !== null && !Array.isArray(fromFull) ? structuredClone(fromFull) : {};
    parent = parent[name] as Record<string, unknown>;
    fullParent = fromFull as Record<string, unknown>;
  }
  parent[member.path.at(-1) as string] = '__sweep_value__';
  const text = JSON.stringify(body).replace(placeholder, bad.text);
  return make(`body/${member.path.join('/')}: ${bad.label}`, expectation(text, bad.certain), { body: text });
}

function withoutCredentials(headers: Record<string, string>, credentials: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !(name in credentials)));
}

/** Whether a body text is JSON that the declared schema accepts (with the body validator's own settings). */
function bodyMeetsSchema(text: string, schema: JsonSchema): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  return compiled(schema)(value) === true;
}

function seededPick<T>(items: T[], count: number, seed: number): T[] {
  if (items.length <= count) return items;
  const random = seededRandom(seed);
  const shuffled = [...items];
  for (let index = shuffled.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [shuffled[index], shuffled[other]] = [shuffled[other] as T, shuffled[index] as T];
  }
  return shuffled.slice(0, count);
}
