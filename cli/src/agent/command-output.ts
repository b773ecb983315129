import { MarketplaceError } from '@platform/client/marketplace-client';
import { ServiceCallError } from '@platform/client/service-session';

/** A mistake in the command line: exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An operation that failed for a reason of ours (no key file, a file in the way): exit 1. */
export class CommandFailure extends Error {
  override readonly name = 'CommandFailure';
}

/** Where a command sends its requests: named in failures, so a refusal says which service refused. */
export interface Target {
  service: string;
  url: string;
  /** The setting that holds the service's transport bearer, named when the service refuses the bearer. */
  tokenSetting?: string;
}

/**
 * One line for any failure, and the exit code: 2 for a usage error, 1 for the rest. The service's own code, message
 * and reason are kept, since they say what to do (`insufficient_funds`, `no_payout_address`).
 */
export function describeFailure(error: unknown, target: Target | undefined): { line: string; code: 1 | 2 } {
  if (error instanceof UsageError) return { line: error.message, code: 2 };
  if (error instanceof CommandFailure) return { line: error.message, code: 1 };
  const service = target?.service ?? 'the service';
  if (error instanceof ServiceCallError) {
    const reason = error.reason ? ` (${error.reason})` : '';
    const hint =
      error.status === 401 && /transport bearer/.test(error.serviceMessage) && target?.tokenSetting
        ? `; set ${target.tokenSetting} (npx platform secret ${target.tokenSetting})`
        : '';
    return { line: `${service} refused: ${error.status} ${error.code}: ${error.serviceMessage}${reason}${hint}`, code: 1 };
  }
  if (error instanceof MarketplaceError) {
    const reason = typeof error.detail.reason === 'string' ? ` (${error.detail.reason})` : '';
    return { line: `${service} refused: ${error.message}${reason}`, code: 1 };
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (error instanceof TypeError && error.message === 'fetch failed')
    return { line: `cannot reach ${service} at ${target?.url}: ${cause?.code ?? cause?.message ?? 'no answer'}`, code: 1 };
  return { line: error instanceof Error ? error.message : String(error), code: 1 };
}

/** Prints rows as aligned columns, the header first (the style of `platform up`'s table). */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] as number)))
      .join('  ')
      .trimEnd();
  console.log([line(header), ...rows.map(line)].join('\n'));
}

/** A record as a two-column table of field and value; nested values are written as JSON. */
export function printFields(fields: Record<string, unknown>): void {
  printTable(
    ['field', 'value'],
    Object.entries(fields).map(([name, value]) => [name, text(value)]),
  );
}

export function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `--json`: the stable shape on stdout, one document, nothing else. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
