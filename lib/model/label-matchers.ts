/**
 * Prometheus-style label matchers (`severity=critical`, `severity!=info`, `node=~"node-.*"`, `ns!~kube-.*`),
 * parsed from a gate's configuration and applied to an alert's labels. Pure. A regex matcher is anchored,
 * as Prometheus anchors its own; a label an alert lacks is the empty string, as in Prometheus.
 */

export interface LabelMatcher {
  readonly name: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/;

/** The matcher `text` names, or why it names none (the configuration's error message). */
export function parseMatcher(text: string): LabelMatcher | string {
  const match = MATCHER.exec(text);
  if (!match) return `"${text}" must be a label matcher like severity=critical, severity!=info, node=~"node-.*"`;
  const [, name = '', op = '=', raw = ''] = match;
  const value = /^".*"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (op === '=~' || op === '!~') {
    try {
      new RegExp(`^(?:${value})$`);
    } catch {
      return `"${text}": ${value} is not a valid regular expression`;
    }
  }
  return { name, op: op as LabelMatcher['op'], value };
}

export function matchesLabels(matcher: LabelMatcher, labels: Readonly<Record<string, string>>): boolean {
  const actual = labels[matcher.name] ?? '';
  switch (matcher.op) {
    case '=':
      return actual === matcher.value;
    case '!=':
      return actual !== matcher.value;
    case '=~':
      return new RegExp(`^(?:${matcher.value})$`).test(actual);
    case '!~':
      return !new RegExp(`^(?:${matcher.value})$`).test(actual);
  }
}

/** `KubeNodeNotReady{node="node-7"}`: an alert as a person reads it (its name, then its other labels). */
export function describeAlert(labels: Readonly<Record<string, string>>): string {
  const { alertname = '(unnamed)', ...rest } = labels;
  const pairs = Object.entries(rest)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return pairs.length > 0 ? `${alertname}{${pairs.join(',')}}` : alertname;
}
