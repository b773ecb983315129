/** A compiler message as the caller sees it: where (1-based line and column) and what. */
export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  /** solc's kind: ParserError, TypeError, DeclarationError, Warning, ... */
  type: string;
  /** solc's numeric error code, when it has one. */
  code: string | null;
  message: string;
  file: string | null;
  line: number | null;
  column: number | null;
  end_line: number | null;
  end_column: number | null;
  /** The full text solc prints, with the source excerpt. */
  formatted: string;
}

/** The fields of solc's standard-JSON error objects we read. */
export interface SolcError {
  severity: string;
  type: string;
  errorCode?: string;
  message: string;
  formattedMessage?: string;
  sourceLocation?: { file: string; start: number; end: number };
}

interface Position {
  line: number;
  column: number;
}

/** solc counts offsets in UTF-8 bytes, not JavaScript characters, so non-ASCII comments would shift every column. */
function positionAt(bytes: Buffer, offset: number): Position {
  const before = bytes.subarray(0, Math.max(0, Math.min(offset, bytes.length))).toString('utf8');
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let index = before.indexOf('\n'); index !== -1; index = before.indexOf('\n', index + 1)) line++;
  return { line, column: [...before.slice(lineStart)].length + 1 };
}

/**
 * Turns solc's errors into diagnostics with line and column, reading the text each location points into.
 * `contentOf` returns a source's text by its source unit name (the caller's file or a library import).
 */
export function toDiagnostics(errors: readonly SolcError[], contentOf: (file: string) => string | undefined): Diagnostic[] {
  const encoded = new Map<string, Buffer>();
  return errors.map((error) => {
    const location = error.sourceLocation;
    let start: Position | undefined;
    let end: Position | undefined;
    if (location && location.start >= 0) {
      const content = contentOf(location.file);
      if (content !== undefined) {
        let bytes = encoded.get(location.file);
        if (!bytes) {
          bytes = Buffer.from(content, 'utf8');
          encoded.set(location.file, bytes);
        }
        start = positionAt(bytes, location.start);
        end = positionAt(bytes, Math.max(location.start, location.end));
      }
    }
    return {
      severity: error.severity === 'error' ? 'error' : error.severity === 'warning' ? 'warning' : 'info',
      type: error.type,
      code: error.errorCode ?? null,
      message: error.message,
      file: location?.file || null,
      line: start?.line ?? null,
      column: start?.column ?? null,
      end_line: end?.line ?? null,
      end_column: end?.column ?? null,
      formatted: (error.formattedMessage ?? error.message).trimEnd(),
    };
  });
}
