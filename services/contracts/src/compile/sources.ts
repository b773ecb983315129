import { createHash } from 'node:crypto';
import { canonicalJson } from '@platform/kit/canonical-json';
import { invalidRequest } from '@platform/kit/errors';
import { limits } from '../limits.ts';

/** What the caller sends: workdir-relative path to Solidity source. */
export type SourceMap = Readonly<Record<string, string>>;

export interface CompileSettings {
  readonly optimize: boolean;
  readonly viaIr: boolean;
}

// Contracts under src/, tests under test/, deploy scripts under script/. Anything else would be read as a
// library import (forge-std/..., @openzeppelin/...), so a caller could shadow a library by accident.
const sourcePath = /^(src|test|script)\/(?:[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\/)*[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\.sol$/;
const projectIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Refuses source maps the compiler should never see: paths outside src/test/script, `..`, too many files. */
export function checkSources(sources: SourceMap): void {
  const paths = Object.keys(sources);
  if (paths.length === 0) throw invalidRequest('sources must hold at least one file');
  if (paths.length > limits.sourceFiles) throw invalidRequest(`sources may hold at most ${limits.sourceFiles} files`);
  for (const path of paths) {
    if (path.length > limits.sourcePathChars || !sourcePath.test(path) || path.split('/').includes('..')) {
      throw invalidRequest(`sources: "${path.slice(0, 80)}" must be a relative .sol path under src/, test/ or script/`, { field: 'sources' });
    }
  }
}

export function checkProjectId(projectId: string): void {
  if (projectId.length > limits.projectIdChars || !projectIdPattern.test(projectId)) {
    throw invalidRequest('project_id must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit', { field: 'project_id' });
  }
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The default project id: the same sources always name the same project, whatever order the map was sent in. */
export function projectIdOf(sources: SourceMap): string {
  return `p-${sha256Hex(canonicalJson(sources)).slice(0, 32)}`;
}

/** The compile cache key: sources, settings and the exact compiler, so any change to one is a new build. */
export function buildHashOf(sources: SourceMap, settings: CompileSettings, solcVersion: string): string {
  return sha256Hex(canonicalJson({ sources, optimize: settings.optimize, viaIr: settings.viaIr, solc: solcVersion }));
}
