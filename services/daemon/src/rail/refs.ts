/**
 * References from a tool step's arguments to earlier results: `{"$ref": "<step>"}` is the whole result of that step,
 * `{"$ref": "<step>.<field>.<index>"}` a part of it (numbers index arrays).
 */
export interface ArgumentRef {
  /** JSON pointer of the argument that holds the ref (`/to`, `/items/0`). */
  pointer: string;
  step: string;
  path: string[];
}

function isRef(value: unknown): value is { $ref: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { $ref?: unknown }).$ref === 'string'
  );
}

export function findRefs(value: unknown, pointer = ''): ArgumentRef[] {
  if (isRef(value)) {
    const [step = '', ...path] = value.$ref.split('.');
    return [{ pointer, step, path }];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => findRefs(item, `${pointer}/${index}`));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, item]) => findRefs(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`));
  return [];
}

export type Resolved = { ok: true; value: unknown } | { ok: false; problem: string };

function follow(result: unknown, path: readonly string[], ref: string): Resolved {
  let current = result;
  for (const part of path) {
    if (Array.isArray(current) && /^\d+$/.test(part) && Number(part) < current.length) current = current[Number(part)];
    else if (typeof current === 'object' && current !== null && !Array.isArray(current) && Object.hasOwn(current, part))
      current = (current as Record<string, unknown>)[part];
    else return { ok: false, problem: `$ref ${ref}: the result has no "${part}"` };
  }
  return { ok: true, value: current };
}

/** Replaces every ref by the value it names; the first that cannot be found is the problem. */
export function resolveRefs(value: unknown, results: ReadonlyMap<string, unknown>): Resolved {
  if (isRef(value)) {
    const [step = '', ...path] = value.$ref.split('.');
    if (!results.has(step)) return { ok: false, problem: `$ref ${value.$ref}: step "${step}" has no result` };
    return follow(results.get(step), path, value.$ref);
  }
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      const resolved = resolveRefs(item, results);
      if (!resolved.ok) return resolved;
      items.push(resolved.value);
    }
    return { ok: true, value: items };
  }
  if (typeof value === 'object' && value !== null) {
    const entries: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const resolved = resolveRefs(item, results);
      if (!resolved.ok) return resolved;
      entries[key] = resolved.value;
    }
    return { ok: true, value: entries };
  }
  return { ok: true, value };
}
