/**
 * What the development identity provider and its one client (`platform token`, and `up` for the user's invite) agree
 * on. Kept apart from the provider, so the client does not load oidc-provider (~0.4 s).
 */
export const devClientId = 'platform-cli';
/** Where the code is sent; never requested: `platform token` reads the code from the redirect itself. */
export const devRedirectUri = 'http://127.0.0.1/platform-token';
/** The router's API, the access tokens' `aud` (the router's ROUTER_IDP_AUDIENCE). */
export const devAudience = 'urn:platform:router';
/**
 * The console's client (web/console, served by the router at /console/): public (PKCE, no secret, as a page cannot
 * keep one), its redirect URIs exactly the router's `/console/` (so a code can only land on the router's page, never
 * on another local listener), and allowed to call the token endpoint from the router's origin only (CORS).
 */
export const consoleClientId = 'platform-console';
export const consolePath = '/console/';
export const devScope = 'platform';
/** Beside the router's 8443; PORT=0 under `up` gives it a free port (the last start's when it is still free). */
export const devIdentityPort = 8444;
