import http from 'node:http';

/** One chat-completions call over node:http keep-alive, as the daemon's model client makes it; resolves with the content. */
export function modelCaller(baseUrl: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const target = new URL(`${baseUrl}/chat/completions`);
  return {
    call(body: Record<string, unknown>): Promise<string> {
      const text = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const request = http.request(
          target,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-platform-slot': 'executor' } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')).choices[0].message.content));
          },
        );
        request.on('error', reject);
        request.end(text);
      });
    },
    close: () => agent.destroy(),
  };
}

/** A request body of the rail's shape: a system prompt, the user's words, and a structured-output schema when named. */
export function railBody(schemaName: string | undefined, user: string): Record<string, unknown> {
  return {
    model: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
    messages: [
      { role: 'system', content: 'You turn a request from the user into a structured intent for the personal agent that acts for them. '.repeat(4) },
      { role: 'user', content: user },
    ],
    max_tokens: 1024,
    ...(schemaName ? { response_format: { type: 'json_schema', json_schema: { name: schemaName, schema: { type: 'object' }, strict: true } } } : {}),
  };
}
