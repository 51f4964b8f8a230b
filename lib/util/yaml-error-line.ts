/**
 * Where a YAML parse failed, as " (line N)" or "". The parser's own message quotes the offending
 * line — in a kubeconfig or clouds.yaml that line can hold a token or a password — so callers name
 * the line and never pass the parser's message on.
 */
export function yamlErrorLine(error: unknown): string {
  const line = (error as { linePos?: { line: number }[] } | null)?.linePos?.[0]?.line;
  return line ? ` (line ${line})` : '';
}
