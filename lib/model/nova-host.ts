/**
 * Which Nova compute host a Kubernetes node is. Default: the node name. Overrides, first match wins:
 * the node's `drainbridge.io/nova-host` annotation, then the same key as a label, then the configured
 * rules (a regular expression on the node name and a replacement, e.g. strip a domain suffix).
 */
import { z } from 'zod';
import { InvalidInput } from '../errors/index.ts';

/** Annotation (or label) naming the Nova host of a node explicitly. */
export const NOVA_HOST_KEY = 'drainbridge.io/nova-host';

const validRegex = z.string().refine(
  (source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'is not a valid regular expression' },
);

/**
 * One mapping rule, for lib/config to embed: a node whose name matches `nodeNamePattern` (a regular
 * expression, anchored by the author as needed) maps to `novaHost`, where `$1`, `$<name>` refer to
 * the pattern's groups. Example: `{ nodeNamePattern: "^(.*)\\.k8s\\.example$", novaHost: "$1" }`.
 */
export const novaHostRuleSchema = z.strictObject({
  nodeNamePattern: validRegex,
  novaHost: z.string().min(1, 'must not be empty'),
});
export type NovaHostRule = z.infer<typeof novaHostRuleSchema>;
export const novaHostRulesSchema = z.array(novaHostRuleSchema);

/**
 * The one-line form for an environment variable (`DRAINBRIDGE_NOVA_HOST_RULE`):
 *   `node-name`                       the default: no rule;
 *   `regex:<pattern>=><replacement>`  one rule, e.g. `regex:^(.*)\.k8s\.example$=>$1`;
 *   a JSON array of rule objects      several rules, first match wins.
 */
export const novaHostRuleTextSchema = z.string().transform((text, ctx): NovaHostRule[] => {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'node-name') return [];
  let candidate: unknown;
  if (trimmed.startsWith('regex:')) {
    const [pattern, replacement] = trimmed.slice('regex:'.length).split('=>');
    candidate = [{ nodeNamePattern: pattern ?? '', novaHost: replacement ?? '' }];
  } else {
    try {
      candidate = JSON.parse(trimmed);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'expected node-name, regex:<pattern>=><replacement> or a JSON array of rules',
      });
      return z.NEVER;
    }
  }
  const parsed = novaHostRulesSchema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    ctx.addIssue({ code: 'custom', message: `${issue.path.join('../branches/nova')}: ${issue.message}` });
  return z.NEVER;
});

export interface NodeIdentity {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** How a Nova host was chosen, for messages ("from annotation drainbridge.io/nova-host"). */
export interface HostMapping {
  readonly host: string;
  readonly source: 'annotation' | 'label' | 'rule' | 'node-name';
}

/** Maps a node to its Nova host (pure). Throws InvalidInput when an override is empty. */
export function novaHostOf(node: NodeIdentity, rules: readonly NovaHostRule[] = []): HostMapping {
  const annotated = node.annotations?.[NOVA_HOST_KEY];
  if (annotated !== undefined)
    return { host: nonEmpty(annotated, `metadata.annotations["${NOVA_HOST_KEY}"]`), source: 'annotation' };
  const labelled = node.labels?.[NOVA_HOST_KEY];
  if (labelled !== undefined)
    return { host: nonEmpty(labelled, `metadata.labels["${NOVA_HOST_KEY}"]`), source: 'label' };
  for (const rule of rules) {
    const pattern = new RegExp(rule.nodeNamePattern);
    if (pattern.test(node.name)) {
      return { host: nonEmpty(node.name.replace(pattern, rule.novaHost), 'novaHost rule result'), source: 'rule' };
    }
  }
  return { host: node.name, source: 'node-name' };
}

function nonEmpty(value: string, path: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new InvalidInput('Nova host mapping', [{ path, message: 'must not be empty' }]);
  return trimmed;
}
