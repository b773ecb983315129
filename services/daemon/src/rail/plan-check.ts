import { compileChecker } from '../llm/json-check.ts';
import { approvalOptions, gateFor } from '../tools/gate-policy.ts';
import { stepKey, type ToolInfo } from '../tools/tool-types.ts';
import type { PlannedStep, PlanOutput } from './outputs.ts';
import type { PlanStep } from './plan-types.ts';
import { findRefs } from './refs.ts';

export const planLimits = { steps: 20, title: 200, prompt: 8_000, question: 1_000, options: 6, option: 200, argumentsChars: 16_384 } as const;
const stepIdPattern = /^[a-z0-9_-]{1,32}$/;

export type PlanCheck = { ok: true; steps: PlanStep[] } | { ok: false; problems: string[] };

const checkers = new WeakMap<ToolInfo, ReturnType<typeof compileChecker>>();

function checkerFor(tool: ToolInfo) {
  if (!checkers.has(tool)) checkers.set(tool, compileChecker(tool.inputSchema));
  return checkers.get(tool);
}

/** Problems with a tool's arguments; values that are `$ref`s are checked when the walk resolves them. */
export function argumentProblems(tool: ToolInfo, args: Record<string, unknown>, refPaths: readonly string[] = []): string[] {
  const problems = checkerFor(tool)?.(args) ?? [];
  return problems
    .filter((problem) => !refPaths.some((path) => problem.path === path || problem.path.startsWith(`${path}/`)))
    .map((problem) => `arguments${problem.path.replaceAll('/', '.')} ${problem.message}`);
}

function toolStep(planned: PlannedStep, tools: ReadonlyMap<string, ToolInfo>, intentId: string, problems: string[], where: string): PlanStep | undefined {
  const tool = planned.tool === null ? undefined : tools.get(planned.tool);
  if (tool === undefined) {
    problems.push(`${where} uses unknown tool "${planned.tool ?? ''}" (the tools are: ${[...tools.keys()].join(', ') || 'none'})`);
    return undefined;
  }
  let args: unknown = {};
  if (planned.arguments_json !== null && planned.arguments_json.trim() !== '') {
    if (planned.arguments_json.length > planLimits.argumentsChars)
      problems.push(`${where} arguments_json is longer than ${planLimits.argumentsChars} characters`);
    try {
      args = JSON.parse(planned.arguments_json);
    } catch {
      problems.push(`${where} arguments_json is not JSON`);
      return undefined;
    }
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    problems.push(`${where} arguments_json must be a JSON object`);
    return undefined;
  }
  let record = args as Record<string, unknown>;
  // The daemon, not the model, owns idempotency keys: one per step, so a re-run finds the first run's result.
  if (tool.keyArgument !== undefined && record[tool.keyArgument] === undefined)
    record = { ...record, [tool.keyArgument]: stepKey({ intentId, nodeId: planned.id }) };
  const refs = findRefs(record);
  for (const problem of argumentProblems(
    tool,
    record,
    refs.map((ref) => ref.pointer),
  ))
    problems.push(`${where} (${tool.name}) ${problem}`);
  const depends = new Set(planned.depends_on);
  for (const ref of refs) depends.add(ref.step);
  return {
    id: planned.id,
    kind: 'tool',
    title: planned.title,
    tool: tool.name,
    arguments: record,
    rerun_safe: tool.rerunSafe,
    depends_on: [...depends],
  };
}

/** Orders steps so each comes after what it depends on (plan order otherwise); undefined when there is a cycle. */
export function dependencyOrder<T extends { id: string; depends_on: string[] }>(steps: readonly T[]): T[] | undefined {
  const placed = new Set<string>();
  const ordered: T[] = [];
  while (ordered.length < steps.length) {
    const next = steps.find((step) => !placed.has(step.id) && step.depends_on.every((id) => placed.has(id)));
    if (next === undefined) return undefined;
    placed.add(next.id);
    ordered.push(next);
  }
  return ordered;
}

/**
 * Checks a planned graph against the tools the daemon really has and the rail's limits, and normalises it: refs add
 * their step to depends_on, idempotency keys are filled, and the daemon's policy puts an approval gate before every
 * step with a consequence. Returns every problem at once, for one re-plan to fix them all.
 */
export function checkPlan(planned: PlanOutput, tools: ReadonlyMap<string, ToolInfo>, options: { intentId: string; ungated: ReadonlySet<string> }): PlanCheck {
  const problems: string[] = [];
  if (planned.steps.length === 0) problems.push('the plan has no steps');
  if (planned.steps.length > planLimits.steps) problems.push(`the plan has ${planned.steps.length} steps; at most ${planLimits.steps}`);
  const ids = new Set<string>();
  const steps: PlanStep[] = [];
  for (const [index, raw] of planned.steps.slice(0, planLimits.steps).entries()) {
    const where = `step ${index + 1} ("${raw.id}")`;
    if (!stepIdPattern.test(raw.id)) problems.push(`${where} id must be 1–32 of a-z 0-9 _ -`);
    if (ids.has(raw.id)) problems.push(`${where} id is used twice`);
    ids.add(raw.id);
    const title = raw.title.trim() || raw.id;
    if (title.length > planLimits.title) problems.push(`${where} title is longer than ${planLimits.title} characters`);
    const planned = { ...raw, title };
    if (raw.kind === 'tool') {
      const step = toolStep(planned, tools, options.intentId, problems, where);
      if (step) steps.push(step);
    } else if (raw.kind === 'model') {
      if ((raw.prompt ?? '').trim() === '') problems.push(`${where} is a model step without a prompt`);
      else if ((raw.prompt ?? '').length > planLimits.prompt) problems.push(`${where} prompt is longer than ${planLimits.prompt} characters`);
      steps.push({ id: raw.id, kind: 'model', title, prompt: raw.prompt ?? '', depends_on: [...raw.depends_on] });
    } else {
      if ((raw.question ?? '').trim() === '') problems.push(`${where} is a gate without a question`);
      else if ((raw.question ?? '').length > planLimits.question) problems.push(`${where} question is longer than ${planLimits.question} characters`);
      if (raw.options.length > planLimits.options || raw.options.some((option) => option.length > planLimits.option))
        problems.push(`${where} has more than ${planLimits.options} options or an option longer than ${planLimits.option} characters`);
      steps.push({ id: raw.id, kind: 'gate', title, question: raw.question ?? '', options: [...raw.options], depends_on: [...raw.depends_on] });
    }
  }
  for (const step of steps)
    for (const dependency of step.depends_on) {
      if (dependency === step.id) problems.push(`step "${step.id}" depends on itself`);
      else if (!ids.has(dependency)) problems.push(`step "${step.id}" depends on unknown step "${dependency}"`);
    }
  if (problems.length === 0 && dependencyOrder(steps) === undefined) problems.push('the steps depend on each other in a cycle');
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, steps: withApprovalGates(steps, tools, options.ungated, ids) };
}

/** Puts the policy's approval gate before each step that needs one. */
function withApprovalGates(steps: PlanStep[], tools: ReadonlyMap<string, ToolInfo>, ungated: ReadonlySet<string>, ids: Set<string>): PlanStep[] {
  const result: PlanStep[] = [];
  for (const step of steps) {
    const tool = step.tool === undefined ? undefined : tools.get(step.tool);
    const decision = tool === undefined ? undefined : gateFor(tool, step.arguments ?? {}, ungated);
    if (decision === undefined) {
      result.push(step);
      continue;
    }
    let gateId = `${step.id}-approval`.slice(0, 40);
    while (ids.has(gateId)) gateId = `${gateId.slice(0, 36)}-${Math.floor(Math.random() * 1000)}`;
    ids.add(gateId);
    result.push({
      id: gateId,
      kind: 'gate',
      title: `Approve: ${step.title}`,
      question: '',
      options: approvalOptions,
      depends_on: [...step.depends_on],
      guards: step.id,
      gate_reason: decision.reason,
    });
    result.push({ ...step, depends_on: [...step.depends_on, gateId] });
  }
  return result;
}
