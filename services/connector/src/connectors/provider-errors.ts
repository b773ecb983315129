import { ServiceError } from '@platform/kit/errors';

/**
 * The provider refused the stored credential itself (HTTP 401): the invoke route marks the connection
 * `needs_reconnect`. A subclass so the route can tell it from every other refusal without parsing messages; any
 * connector's tools throw it, so it lives outside the workspace folder.
 */
export class CredentialRefused extends ServiceError {}
