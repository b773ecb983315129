import { generateSync } from 'json-schema-faker';
import type { JsonSchema } from './operations.ts';

/** Valid values by member or parameter name (a DID the service knows, an id that exists), used wherever the name appears. */
export type Samples = Readonly<Record<string, unknown>>;

/**
 * A value for `schema`: the sample named `name` when there is one, else one generated from the schema (json-schema-faker,
 * deterministic by seed). `full` asks for every optional member of an object, else only the required ones. Members of a
 * generated object that have a sample get it, at any depth.
 */
export function sampleValue(schema: JsonSchema | undefined, options: { seed: number; samples: Samples; name?: string; full?: boolean }): unknown {
  if (options.name !== undefined && options.name in options.samples) return options.samples[options.name];
  let value: unknown;
  try {
    value = generateSync((schema ?? {}) as never, { seed: options.seed, optionalsProbability: options.full ? 1 : 0, maxDepth: 4, maxDefaultItems: 2 });
  } catch {
    value = schema?.type === 'object' ? {} : 'sweep';
  }
  return withSamples(value, options.samples);
}

function withSamples(value: unknown, samples: Samples): unknown {
  if (Array.isArray(value)) return value.map((item) => withSamples(item, samples));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, name in samples ? samples[name] : withSamples(member, samples)]));
}

/**
 * One bad value: the JSON text put in a body member, or the text put (already percent-encoded) in a query or path
 * parameter. `certain` marks what every service must refuse with a 4xx whatever its schema says (NUL, a lone
 * surrogate, nesting past the kit's limit, a length past the declared one); the rest must only not break anything,
 * and must be refused when the declared schema refuses them.
 */
export interface BadValue {
  label: string;
  text: string;
  certain: boolean;
}

const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** Bad JSON values for a body member declared by `schema`. */
export function badJsonValues(schema: JsonSchema | undefined): BadValue[] {
  const values: BadValue[] = [
    { label: 'NUL', text: '"a\\u0000b"', certain: true },
    { label: 'lone surrogate', text: '"x\\ud800"', certain: true },
    { label: 'nested 100 deep', text: deepArray(100), certain: true },
    { label: 'null', text: 'null', certain: false },
    { label: 'true', text: 'true', certain: false },
    { label: 'a number', text: '12', certain: false },
    { label: 'a string', text: '"sweep"', certain: false },
    { label: 'an empty string', text: '""', certain: false },
    { label: 'an array', text: '[1]', certain: false },
    { label: 'an object', text: '{"sweep":1}', certain: false },
    { label: '-1', text: '-1', certain: false },
    { label: '2^53 + 1', text: '9007199254740993', certain: false },
    { label: '1e400', text: '1e400', certain: typeOf(schema).some((type) => type === 'number' || type === 'integer') },
    { label: '0.5', text: '0.5', certain: false },
    { label: 'year 0', text: '"0000-01-01T00:00:00Z"', certain: false },
    { label: 'year 275760', text: '"+275760-09-13T00:00:00.000Z"', certain: false },
    { label: 'February 30', text: '"2024-02-30T00:00:00Z"', certain: false },
    { label: 'SQL', text: `"' OR 1=1; --"`, certain: false },
    { label: 'emoji', text: '"\\ud83d\\ude00"', certain: false },
  ];
  const maxLength = typeof schema?.maxLength === 'number' ? schema.maxLength : undefined;
  values.push(
    maxLength === undefined
      ? { label: '70,000 characters', text: JSON.stringify('x'.repeat(70_000)), certain: false }
      : { label: `${maxLength + 1} characters (maxLength ${maxLength})`, text: JSON.stringify('x'.repeat(maxLength + 1)), certain: true },
  );
  return values;
}

/** Bad values for a query or path parameter, as they go into the URL (percent-encoded where they must be). */
export function badUrlValues(schema: JsonSchema | undefined, where: 'query' | 'path'): BadValue[] {
  const values: BadValue[] = [
    { label: 'NUL', text: '%00', certain: true },
    { label: 'a NUL inside', text: 'a%00b', certain: true },
    // A UTF-8 spelling of a lone surrogate: no valid UTF-8 decodes to it.
    { label: 'an encoded lone surrogate', text: '%ED%A0%80', certain: where === 'path' },
    { label: 'not UTF-8', text: '%ff', certain: where === 'path' },
    { label: '-1', text: '-1', certain: false },
    { label: '0', text: '0', certain: false },
    { label: '1e400', text: '1e400', certain: false },
    { label: '10^22', text: '9999999999999999999999', certain: false },
    { label: 'a space', text: '%20', certain: false },
    { label: 'emoji', text: '%F0%9F%98%80', certain: false },
    { label: 'year 0', text: '0000-01-01T00%3A00%3A00Z', certain: false },
    { label: 'SQL', text: "'%20OR%201%3D1%3B--", certain: false },
  ];
  if (where === 'query') values.push({ label: 'empty', text: '', certain: false });
  const maxLength = typeof schema?.maxLength === 'number' ? schema.maxLength : undefined;
  if (maxLength !== undefined) values.push({ label: `${maxLength + 1} characters (maxLength ${maxLength})`, text: 'x'.repeat(maxLength + 1), certain: true });
  values.push({ label: '2,000 characters', text: 'x'.repeat(2_000), certain: where === 'path' });
  return values;
}

/** Whole bodies that are not what any JSON route takes. */
export const badBodies: ReadonlyArray<{ label: string; text: string; contentType?: string; certain: boolean }> = [
  { label: 'not JSON', text: 'not json', certain: true },
  { label: 'truncated JSON', text: '{"a":', certain: true },
  { label: 'nested 20,000 deep', text: `{"a":${deepArray(20_000)}}`, certain: true },
  { label: 'a NUL member name', text: '{"a\\u0000":1}', certain: true },
  { label: 'JSON null', text: 'null', certain: false },
  { label: 'a JSON string', text: '"text"', certain: false },
  { label: 'a JSON array', text: '[]', certain: false },
  { label: '1e400', text: '1e400', certain: false },
  { label: 'duplicate members', text: '{"a":1,"a":2}', certain: false },
  { label: 'text/plain', text: '{}', contentType: 'text/plain', certain: true },
  { label: 'a form', text: 'a=1', contentType: 'application/x-www-form-urlencoded', certain: true },
];

/**
 * Bodies no multipart route can read: not multipart, no boundary, a part cut off, JSON where a form is declared.
 * The well-formed upload the test gives (`rawBody`) is sent too, and cut in half.
 */
export const badMultipartBodies: ReadonlyArray<{ label: string; text: string; contentType: string }> = [
  { label: 'multipart that is not', text: 'not a form', contentType: 'multipart/form-data; boundary=sweep' },
  { label: 'multipart without a boundary', text: '--sweep\r\n\r\n--sweep--\r\n', contentType: 'multipart/form-data' },
  {
    label: 'a part that never ends',
    text: '--sweep\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"main',
    contentType: 'multipart/form-data; boundary=sweep',
  },
  { label: 'an empty form', text: '--sweep--\r\n', contentType: 'multipart/form-data; boundary=sweep' },
  {
    label: 'a NUL in a part name',
    text: '--sweep\r\nContent-Disposition: form-data; name="a\u0000.js"; filename="a.js"\r\n\r\nexport default {}\r\n--sweep--\r\n',
    contentType: 'multipart/form-data; boundary=sweep',
  },
  { label: 'JSON where a form is declared', text: '{"metadata":{}}', contentType: 'application/json' },
];

export function typeOf(schema: JsonSchema | undefined): string[] {
  const type = schema?.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
}

/** The members of an object schema, one level (and one more into object members), as paths. */
export function memberPaths(schema: JsonSchema | undefined, prefix: string[] = [], depth = 0): Array<{ path: string[]; schema: JsonSchema }> {
  const properties = schema?.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return [];
  return Object.entries(properties).flatMap(([name, member]) => [
    { path: [...prefix, name], schema: member },
    ...(depth < 1 ? memberPaths(member, [...prefix, name], depth + 1) : []),
  ]);
}
