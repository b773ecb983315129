/**
 * What the development identity provider and its one client (`platform token`, and `up` for the user's invite) agree
 * on. Kept apart from the provider, so the client does not load oidc-provider (~0.4 s).
 */
export const devClientId = 'platform-cli';
/** Where the code is sent; never requested: `platform token` reads the code from the redirect itself. */
export const devRedirectUri = 'http://127.0.0.1/platform-token';
/** The router's API, the access tokens' `aud` (the router's ROUTER_IDP_AUDIENCE). */
export const devAudience = 'urn:platform:router';
export const devScope = 'platform';
/** Beside the router's 8443; PORT=0 under `up` gives it a free port (the last start's when it is still free). */
export const devIdentityPort = 8444;
