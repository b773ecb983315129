import { compileStrict } from '@platform/kit/http/validation';
import type { SweepCase } from './cases.ts';
import { declaredAnswer, type JsonSchema } from './operations.ts';

/** One thing the sweep found wrong. */
export interface Finding {
  operation: string;
  case: string;
  problem: string;
  /** What was sent and what came back, shortened, for the failure message. */
  evidence: string;
}

export interface Answer {
  status: number;
  contentType: string;
  /** The body, when it was read (JSON answers and failures); streams and pages are not. */
  text: string | undefined;
}

export interface AnswerRules {
  /** `METHOD /path STATUS` → why that failure is not a caller's mistake (a dependency the sweep does not run). */
  allowedFailures: Readonly<Record<string, string>>;
  /** Header names (lower case) the service may name in its refusals without declaring them: the security schemes' own. */
  declaredHeaders: ReadonlySet<string>;
  /** Routes whose body is a proof to check (a handshake's signature): their 401 is the proof refused, not a hidden credential. */
  proofRoutes: ReadonlySet<string>;
}

// Header names a refusal's message may mention: X-… headers and the few standard ones the services read.
const headerMention = /\b(x-[a-z0-9-]+|idempotency-key|last-event-id)\b/gi;

/** What is wrong with one answer, judged against the case's expectation and the operation's declared answers. */
export function judge(sent: SweepCase, answer: Answer, rules: AnswerRules): string[] {
  const problems: string[] = [];
  const { status } = answer;
  const operation = sent.operation;
  const allowed = rules.allowedFailures[`${operation.id} ${status}`] !== undefined;
  if (status >= 500 && !allowed) problems.push(`answered ${status} to a caller's request`);
  if (sent.expect === 'unauthorized' && status !== 401) problems.push(`answered ${status} without valid credentials (expected 401)`);
  if (sent.expect === 'refused' && (status < 400 || status >= 500)) problems.push(`answered ${status} to input it must refuse (expected a 4xx)`);
  if (sent.expect === 'public' && status === 401 && !rules.proofRoutes.has(operation.id))
    problems.push('asks for credentials its document does not declare (401 on a route with no security scheme)');
  const declared = declaredAnswer(operation, status);
  if (!declared) problems.push(`answered ${status}, which its document does not declare`);
  else if (answer.text !== undefined) problems.push(...shapeProblems(declared, answer));
  if (status >= 400 && answer.text !== undefined) problems.push(...undeclaredHeaders(operation, answer.text, rules.declaredHeaders));
  return problems;
}

function shapeProblems(declared: Record<string, JsonSchema | undefined>, answer: Answer): string[] {
  const types = Object.keys(declared);
  if (types.length === 0) return [];
  const type = answer.contentType.split(';')[0]?.trim() ?? '';
  if (!types.includes(type)) return [`answered ${answer.status} as ${type || 'no content type'}, declared ${types.join(' or ')}`];
  const schema = declared[type];
  if (type !== 'application/json' || schema === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(answer.text ?? '');
  } catch {
    return [`answered ${answer.status} with a body that is not JSON`];
  }
  const validate = compiled(schema);
  if (validate(value)) return [];
  const first = validate.errors?.[0];
  return [`answered ${answer.status} outside its declared shape (${first?.instancePath || 'the body'} ${first?.message ?? 'does not match'})`];
}

function undeclaredHeaders(operation: SweepCase['operation'], text: string, security: ReadonlySet<string>): string[] {
  const declared = new Set([...security, ...operation.headers.map((parameter) => parameter.name.toLowerCase())]);
  const named = new Set([...text.matchAll(headerMention)].map((match) => (match[1] as string).toLowerCase()));
  return [...named].filter((name) => !declared.has(name)).map((name) => `names the header ${name}, which its document does not declare`);
}

const validators = new WeakMap<JsonSchema, ReturnType<typeof compileStrict>>();

/** A compiled check of `schema`, once per schema object, with the body validator's settings. */
export function compiled(schema: JsonSchema): ReturnType<typeof compileStrict> {
  let validate = validators.get(schema);
  if (!validate) {
    validate = compileStrict(schema);
    validators.set(schema, validate);
  }
  return validate;
}
