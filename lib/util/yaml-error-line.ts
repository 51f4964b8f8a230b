/**
 * Where a YAML parse failed, as " (line N)" or "". The parser's own message quotes the offending
 * line — in a kubeconfig or clouds.yaml that line can hold a token or a password, and js-yaml (which
 * @kubernetes/client-node uses) quotes the lines before it too — so callers name the line and never
 * pass the parser's message on. Both parsers are read: `yaml` (linePos, 1-based) and js-yaml (mark, 0-based).
 */
export function yamlErrorLine(error: unknown): string {
  const shaped = error as { linePos?: { line: number }[]; mark?: { line?: number } } | null;
  const line = shaped?.linePos?.[0]?.line ?? (typeof shaped?.mark?.line === 'number' ? shaped.mark.line + 1 : 0);
  return line ? ` (line ${line})` : '';
}

/** Whether `error` is a YAML parser's (its message then quotes the document: never show it). */
export function isYamlParseError(error: unknown): boolean {
  const shaped = error as { name?: unknown; linePos?: unknown; mark?: unknown } | null;
  return (
    shaped?.name === 'YAMLException' ||
    shaped?.name === 'YAMLParseError' ||
    shaped?.name === 'YAMLSyntaxError' ||
    shaped?.linePos !== undefined ||
    shaped?.mark !== undefined
  );
}

/**
 * Why a file holding credentials could not be loaded, safe to print: a YAML error by its line only; a
 * file-system error by its code; another loader's message (client-node's checks name keys, not values)
 * as it is.
 */
export function credentialFileProblem(error: unknown): string {
  if (isYamlParseError(error)) return `not valid YAML${yamlErrorLine(error)}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `it cannot be read (${code})`;
  return error instanceof Error ? error.message : String(error);
}
