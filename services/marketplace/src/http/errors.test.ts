import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ErrorCode, errorCatalogue, ServiceError } from '@platform/kit/errors';
import { marketplaceErrorCodes, renderFailure } from './errors.ts';

test('every kit error renders as one of the spec’s eleven codes, with its message, detail and retryable', () => {
  for (const code of Object.keys(errorCatalogue) as ErrorCode[]) {
    const rendered = renderFailure(new ServiceError(code, `a ${code}`, { details: { reason: 'why' } }));
    assert.ok((marketplaceErrorCodes as readonly string[]).includes(rendered.error), `${code} rendered as ${rendered.error}`);
    assert.equal(rendered.message, `a ${code}`);
    assert.deepEqual(rendered.detail, { reason: 'why', retryable: errorCatalogue[code].retryable });
  }
  assert.equal(renderFailure(new ServiceError('internal', 'boom')).error, 'internal_error');
  assert.equal(renderFailure(new ServiceError('unavailable', 'down')).error, 'service_unavailable');
  assert.equal(renderFailure(new ServiceError('quote_expired', 'late', { details: { quote_id: 'q' } })).detail.quote_id, 'q');
});
