// oidc-provider ships no types; this names the little of its surface the development identity provider and the
// testkit's OAuth server use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface KoaContext {
    path: string;
    method: string;
    status: number;
    body: unknown;
    oidc?: { params?: Record<string, unknown> };
  }

  export interface InteractionDetails {
    uid: string;
    grantId?: string;
    params: Record<string, unknown> & { client_id: string; scope?: string };
    prompt: { name: string; details: { missingResourceScopes?: Record<string, string[]> } };
  }

  export interface GrantInstance {
    addResourceScope(indicator: string, scope: string): void;
    rejectResourceScope(indicator: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface TokenInstance {
    scope?: string;
    isExpired: boolean;
    consume(): Promise<void>;
  }

  export const errors: { InvalidTarget: new (description?: string) => Error };

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: new (init: {
      accountId: string;
      clientId: string;
    }) => GrantInstance;
    AccessToken: { find(value: string): Promise<TokenInstance | undefined> };
    AuthorizationCode: { find(value: string): Promise<TokenInstance | undefined> };
    RefreshToken: { find(value: string): Promise<TokenInstance | undefined> };
  }
  export default Provider;
}
