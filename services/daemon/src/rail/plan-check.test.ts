import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ToolInfo } from '../tools/tool-types.ts';
import type { PlannedStep } from './outputs.ts';
import { checkPlan, dependencyOrder, planLimits } from './plan-check.ts';

const intentId = 'f'.repeat(64);
const tool = (name: string, inputSchema: Record<string, unknown>, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  server: name.split('.')[0] as string,
  remoteName: name.split('.')[1] as string,
  description: '',
  inputSchema,
  readOnly: true,
  rerunSafe: true,
  ...extra,
});
const tools = new Map<string, ToolInfo>([
  ['memory.recall', tool('memory.recall', { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false })],
  [
    'payments.pay',
    tool(
      'payments.pay',
      {
        type: 'object',
        properties: { to: { type: 'string' }, amount: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } },
        required: ['to', 'amount'],
        additionalProperties: false,
      },
      { readOnly: false },
    ),
  ],
  [
    'contracts.tachyon_deploy',
    tool('contracts.tachyon_deploy', { type: 'object', required: ['idempotency_key'] }, { readOnly: false, keyArgument: 'idempotency_key' }),
  ],
]);
const step = (id: string, extra: Partial<PlannedStep> = {}): PlannedStep => ({
  id,
  kind: 'model',
  title: id,
  tool: null,
  arguments_json: null,
  prompt: 'think',
  question: null,
  options: [],
  depends_on: [],
  ...extra,
});
const check = (steps: PlannedStep[]) => checkPlan({ steps }, tools, { intentId, ungated: new Set() });
const problems = (steps: PlannedStep[]) => {
  const result = check(steps);
  return result.ok ? [] : result.problems;
};

describe('plan checks', () => {
  test('a ref adds its step to depends_on and is checked at the walk, not at plan time', () => {
    const result = check([
      step('find', { kind: 'tool', tool: 'memory.recall', arguments_json: '{"query":"bob"}' }),
      step('pay', { kind: 'tool', tool: 'payments.pay', arguments_json: '{"to":{"$ref":"find.memories.0.content"},"amount":"2"}' }),
    ]);
    assert.ok(result.ok);
    const pay = result.steps.find((candidate) => candidate.id === 'pay');
    assert.deepEqual(pay?.depends_on, ['find', 'pay-approval']);
    assert.deepEqual(
      result.steps.map((candidate) => candidate.id),
      ['find', 'pay-approval', 'pay'],
      'the policy puts the approval right before the payment',
    );
    assert.equal(result.steps[1]?.guards, 'pay');
  });

  test('the daemon fills idempotency keys with intent:step', () => {
    const result = check([step('ship', { kind: 'tool', tool: 'contracts.tachyon_deploy', arguments_json: '{}' })]);
    assert.ok(result.ok);
    assert.equal(result.steps.find((candidate) => candidate.id === 'ship')?.arguments?.idempotency_key, `${intentId}:ship`);
  });

  test('every problem is named at once: unknown tools, bad arguments, ids, graph', () => {
    assert.deepEqual(
      problems([
        step('a', { kind: 'tool', tool: 'mail.send', arguments_json: '{}' }),
        step('b', { kind: 'tool', tool: 'payments.pay', arguments_json: '{"to":"x","amount":"lots","tip":1}' }),
        step('b'),
        step('C!'),
        step('d', { depends_on: ['zzz', 'd'] }),
        step('e', { kind: 'tool', tool: 'memory.recall', arguments_json: 'not json' }),
        step('f', { kind: 'tool', tool: 'memory.recall', arguments_json: '[1]' }),
        step('g', { kind: 'gate', question: '' }),
        step('h', { prompt: '' }),
      ]),
      [
        'step 1 ("a") uses unknown tool "mail.send" (the tools are: memory.recall, payments.pay, contracts.tachyon_deploy)',
        'step 2 ("b") (payments.pay) arguments has an unknown field "tip"',
        'step 2 ("b") (payments.pay) arguments.amount must match pattern "^\\d+(\\.\\d+)?$"',
        'step 3 ("b") id is used twice',
        'step 4 ("C!") id must be 1–32 of a-z 0-9 _ -',
        'step 6 ("e") arguments_json is not JSON',
        'step 7 ("f") arguments_json must be a JSON object',
        'step 8 ("g") is a gate without a question',
        'step 9 ("h") is a model step without a prompt',
        'step "d" depends on unknown step "zzz"',
        'step "d" depends on itself',
      ],
    );
    assert.deepEqual(problems([step('x', { depends_on: ['y'] }), step('y', { depends_on: ['x'] })]), ['the steps depend on each other in a cycle']);
    assert.deepEqual(problems([]), ['the plan has no steps']);
  });

  test('limits at and past their edge', () => {
    const many = (count: number) => Array.from({ length: count }, (_, index) => step(`s${index}`));
    assert.deepEqual(problems(many(planLimits.steps)), []);
    assert.deepEqual(problems(many(planLimits.steps + 1)), [`the plan has ${planLimits.steps + 1} steps; at most ${planLimits.steps}`]);
    assert.deepEqual(problems([step('t', { title: 't'.repeat(planLimits.title) })]), []);
    assert.match(problems([step('t', { title: 't'.repeat(planLimits.title + 1) })])[0] ?? '', /title is longer than 200/);
    assert.deepEqual(problems([step('p', { prompt: 'p'.repeat(planLimits.prompt) })]), []);
    assert.match(problems([step('p', { prompt: 'p'.repeat(planLimits.prompt + 1) })])[0] ?? '', /prompt is longer than 8000/);
    const gate = (options: string[]) => step('g', { kind: 'gate', question: 'ok?', options });
    assert.deepEqual(problems([gate(Array.from({ length: planLimits.options }, (_, index) => `o${index}`))]), []);
    assert.match(problems([gate(Array.from({ length: planLimits.options + 1 }, (_, index) => `o${index}`))])[0] ?? '', /more than 6 options/);
    const query = (length: number) => JSON.stringify({ query: 'q'.repeat(length - 12) });
    assert.equal(query(planLimits.argumentsChars).length, planLimits.argumentsChars);
    assert.deepEqual(problems([step('r', { kind: 'tool', tool: 'memory.recall', arguments_json: query(planLimits.argumentsChars) })]), []);
    assert.match(
      problems([step('r', { kind: 'tool', tool: 'memory.recall', arguments_json: query(planLimits.argumentsChars + 1) })])[0] ?? '',
      /longer than 16384/,
    );
  });

  test('dependency order keeps plan order where it can', () => {
    const ordered = dependencyOrder([
      { id: 'c', depends_on: ['a', 'b'] },
      { id: 'a', depends_on: [] },
      { id: 'b', depends_on: ['a'] },
      { id: 'd', depends_on: [] },
    ]);
    assert.deepEqual(
      ordered?.map((entry) => entry.id),
      ['a', 'b', 'c', 'd'],
    );
  });
});
