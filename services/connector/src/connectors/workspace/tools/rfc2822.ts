/** What mail_send composes. Addresses are already checked as emails (no CR/LF can reach a header). */
export interface OutgoingMail {
  to: readonly string[];
  cc?: readonly string[];
  subject: string;
  body: string;
}

/**
 * A header value as RFC 2047 encoded words when it is not plain printable ASCII, folded so no word passes 75
 * characters. Encoding also neutralises CR/LF in a subject: they become bytes inside base64, never a new header.
 */
export function encodeHeaderValue(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value) && value.length <= 900) return value;
  const words: string[] = [];
  let chunk = '';
  // 45 UTF-8 bytes → 60 base64 characters + 12 of wrapper = 72: under RFC 2047's 75, never splitting a code point.
  for (const char of value) {
    if (Buffer.byteLength(chunk + char, 'utf8') > 45) {
      words.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk !== '' || words.length === 0) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word, 'utf8').toString('base64')}?=`).join('\r\n ');
}

/** An RFC 2822 message, UTF-8 body in base64 (76-character lines), as Gmail's `users.messages.send` takes it. */
export function composeMessage(mail: OutgoingMail): string {
  const headers = [`To: ${mail.to.join(', ')}`];
  if (mail.cc && mail.cc.length > 0) headers.push(`Cc: ${mail.cc.join(', ')}`);
  headers.push(
    `Subject: ${encodeHeaderValue(mail.subject)}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: base64',
  );
  const body = Buffer.from(mail.body, 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n');
  return `${headers.join('\r\n')}\r\n\r\n${body}`;
}

/** Gmail's `raw`: the whole message in base64url. */
export function rawMessage(mail: OutgoingMail): string {
  return Buffer.from(composeMessage(mail), 'utf8').toString('base64url');
}
