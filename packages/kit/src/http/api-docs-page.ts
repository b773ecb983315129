import { createHash } from 'node:crypto';
import type { OpenApiDocument, OpenApiOperation } from './openapi-document.ts';

// Plain and small: the page is read on machines without network access, so it loads nothing and runs no script.
const style = `body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1a1a1a}
h2{border-bottom:1px solid #ccc;margin-top:2.5rem;font-family:ui-monospace,monospace}
.op{margin:1rem 0 1.5rem;padding-left:1rem;border-left:4px solid #8ab}
.method{font:bold 13px ui-monospace,monospace;text-transform:uppercase;background:#def;padding:2px 6px;border-radius:3px}
.missing{color:#a40}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;font-size:13px}`;

/** The Content-Security-Policy of the page: nothing from anywhere, its one inline style allowed by hash. */
const csp = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => escapes[char] ?? char);
}

function json(value: unknown): string {
  return `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
}

function parameters(operation: OpenApiOperation): string {
  if (!operation.parameters?.length) return '';
  const rows = operation.parameters.map(
    (parameter) =>
      `<tr><td><code>${escapeHtml(parameter.name)}</code></td><td>${parameter.in}</td><td>${parameter.required ? 'yes' : 'no'}</td><td>${escapeHtml(parameter.description ?? '')}</td><td>${json(parameter.schema)}</td></tr>`,
  );
  return `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>description</th><th>schema</th></tr>${rows.join('')}</table>`;
}

function requestBody(operation: OpenApiOperation): string {
  if (!operation.requestBody) return '';
  const bodies = Object.entries(operation.requestBody.content).map(([type, media]) => `<p><code>${escapeHtml(type)}</code></p>${json(media.schema)}`);
  return `<h4>Request body</h4>${bodies.join('')}`;
}

function responses(operation: OpenApiOperation): string {
  const missing = operation['x-response-schema'] === 'missing' ? '<p class="missing">No response schema is declared for this route.</p>' : '';
  const items = Object.entries(operation.responses).map(([status, response]) => {
    const bodies = Object.entries(response.content ?? {}).map(([type, media]) => `<p><code>${escapeHtml(type)}</code></p>${json(media.schema)}`);
    return `<li><strong>${escapeHtml(status)}</strong> ${escapeHtml(response.description)}${bodies.join('')}</li>`;
  });
  return `<h4>Responses</h4>${missing}<ul>${items.join('')}</ul>`;
}

function security(operation: OpenApiOperation): string {
  if (!operation.security?.length) return '<p>No credentials needed.</p>';
  const alternatives = operation.security.map((requirement) => Object.keys(requirement).map(escape).join(' + ') || 'none');
  return `<p>Credentials: ${alternatives.join(' <em>or</em> ')}</p>`;
}

function operationSection(path: string, method: string, operation: OpenApiOperation): string {
  const text = operation.summary ?? operation.description;
  return `<div class="op"><h3><span class="method">${escapeHtml(method)}</span> <code>${escapeHtml(path)}</code></h3>${text ? `<p>${escapeHtml(text)}</p>` : ''}${security(operation)}${parameters(operation)}${requestBody(operation)}${responses(operation)}</div>`;
}

/**
 * The OpenAPI document as one HTML page rendered on the server (operations grouped by path, with their parameters,
 * request and response schemas), and the CSP header to send with it.
 *
 * @example const { html, csp } = renderApiDocsPage(app.swagger())
 */
export function renderApiDocsPage(document: OpenApiDocument): { html: string; csp: string } {
  const title = `${document.info.title} ${document.info.version}`;
  const paths = Object.entries(document.paths).map(
    ([path, operations]) =>
      `<section><h2>${escapeHtml(path)}</h2>${Object.entries(operations)
        .map(([method, operation]) => operationSection(path, method, operation))
        .join('')}</section>`,
  );
  const schemes = Object.entries(document.components?.securitySchemes ?? {}).map(
    ([name, scheme]) => `<li><strong>${escapeHtml(name)}</strong>: ${escapeHtml(scheme.description)}</li>`,
  );
  const shared = Object.entries(document.components?.schemas ?? {}).map(
    ([name, schema]) => `<h3 id="${escapeHtml(name)}">${escapeHtml(name)}</h3>${json(schema)}`,
  );
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${style}</style></head><body>
<h1>${escapeHtml(title)}</h1><p>The machine-readable description: <a href="openapi.json">openapi.json</a> (OpenAPI ${escapeHtml(document.openapi)}).</p>
${schemes.length ? `<h2>Credentials</h2><ul>${schemes.join('')}</ul>` : ''}${paths.join('\n')}${shared.length ? `<h2>Shared schemas</h2>${shared.join('')}` : ''}
</body></html>`;
  return { html, csp };
}
