import { invalidRequest, type ServiceError } from '../errors.ts';

/**
 * What the platform does with text a caller sends that PostgreSQL cannot store or that is not Unicode: it refuses it,
 * at the edge, with 400 `invalid_request` naming the field, in every body, query string and path parameter of every
 * service. PostgreSQL's `text` and `jsonb` refuse NUL (U+0000) outright, and a lone UTF-16 surrogate (`"\ud800"`
 * in JSON) has no UTF-8 spelling, so such a string would fail a write half way (or a whole group commit) as a 500;
 * no genuine name, key, message or id needs either. Stripping or replacing them instead would silently change what
 * the caller signed, hashed or deduplicated on.
 *
 * JSON nested deeper than `maxInputDepth` is refused the same way: no route of the platform takes it (the deepest,
 * a manifest's JSON Schemas, stays well inside), and code that walks a value recursively (validation, canonical
 * JSON, serialisers) would run out of stack on 20,000 levels that fit in a small body.
 */
export const maxInputDepth = 64;

/** True when `text` can be stored and signed as it is: no NUL and no lone surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/** Where a value sits in a request: the part (`body`, `querystring`, `params`) and the member path inside it. */
export type InputPart = 'body' | 'querystring' | 'params';

/** The refusal for `text` named `field` (`memories[0].content`; empty for the body itself), or undefined when it is storable. */
export function textProblem(text: string, field: string, part: InputPart = 'body'): ServiceError | undefined {
  if (text.includes('\u0000')) return refusal(part, field, 'must not contain NUL (U+0000)');
  if (!text.isWellFormed()) return refusal(part, field, 'must be well-formed Unicode (it holds a lone surrogate)');
  return undefined;
}

/**
 * The first problem in a parsed JSON body or a parsed query/params object: a string or member name that is not
 * storable text, or nesting deeper than `maxDepth`. The refusal names the field as the services' own checks name
 * theirs (`memories[0].content`, `payment.channel_id`; a parameter by its name), in `details.field` and the message.
 *
 * @example const problem = inputProblem(request.body, 'body'); if (problem) throw problem
 */
export function inputProblem(value: unknown, part: InputPart, maxDepth = maxInputDepth): ServiceError | undefined {
  // Iterative, so the check itself cannot run out of stack on what it exists to refuse.
  const pending: Array<{ value: unknown; field: string; depth: number }> = [{ value, field: '', depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: item, field, depth } = next;
    if (typeof item === 'string') {
      const problem = textProblem(item, field, part);
      if (problem) return problem;
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= maxDepth) return refusal(part, '', `is nested deeper than ${maxDepth} levels`);
    if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push({ value: item[index], field: `${field}[${index}]`, depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(item);
    for (let index = entries.length - 1; index >= 0; index--) {
      const [name, member] = entries[index] as [string, unknown];
      const named = field === '' ? printable(name) : `${field}.${printable(name)}`;
      if (!isStorableText(name)) return textProblem(name, named, part);
      pending.push({ value: member, field: named, depth: depth + 1 });
    }
  }
  return undefined;
}

/** A member name as it can be shown: U+FFFD where it holds NUL or a lone surrogate. */
function printable(name: string): string {
  return name.toWellFormed().replaceAll('\u0000', '\ufffd').slice(0, 64);
}

const partNames: Record<InputPart, string> = { body: 'the body', querystring: 'query parameter', params: 'path parameter' };

function refusal(part: InputPart, field: string, rule: string): ServiceError {
  const subject = field === '' ? (part === 'body' ? 'the body' : `the ${partNames[part]}s`) : part === 'body' ? field : `${partNames[part]} ${field}`;
  return invalidRequest(`${subject} ${rule}`, field === '' ? undefined : { field });
}
