/**
 * What an operator writes in DRAINBRIDGE_GATES: a list of gates, each `kind` with its own fields, validated
 * strictly (an unknown or misspelt field is refused, naming it) before anything starts. One schema per
 * kind; the registry (registry.ts) turns each into the gate that checks it.
 *
 * Example (YAML; JSON is YAML too):
 *
 *   - kind: prometheus-alerts
 *     url: http://prometheus.monitoring:9090
 *     alertFilterRegexp: ^(Watchdog|InfoInhibitor)$
 *     firingOnly: true
 *     matchers: ['severity=critical']
 *   - kind: alertmanager
 *     url: http://alertmanager.monitoring:9093
 *     matchers: ['severity=critical']
 *   - kind: promql
 *     url: http://prometheus.monitoring:9090
 *     expr: slo:error_budget_burn:ratio_1h > 2
 *   - kind: not-ready-nodes
 *     max: 1
 *   - kind: pdbs-at-zero
 *     for: 10m
 *   - kind: failure-domain
 *   - kind: http
 *     url: https://checks.example.com/fleet-ok
 */
import { z } from 'zod';
import { parseMatcher } from './label-matchers.ts';

/** `10s` → 10: a whole number of seconds (s) or minutes (m); undefined otherwise. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(s|m|h)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'];
  return seconds > 0 ? seconds : undefined;
}

/** Longest timeout a gate may take: the Admit step runs every gate at once inside its own time limit. */
export const MAX_GATE_TIMEOUT_SECONDS = 30;
export const DEFAULT_GATE_TIMEOUT_SECONDS = 10;

const timeout = z
  .string()
  .transform((text, ctx) => {
    const seconds = parseDuration(text);
    if (seconds === undefined || seconds > MAX_GATE_TIMEOUT_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        message: `"${text}" must be a duration like 5s or 30s, at most ${MAX_GATE_TIMEOUT_SECONDS}s`,
      });
      return z.NEVER;
    }
    return seconds;
  })
  .optional();

const duration = (example: string) =>
  z.string().transform((text, ctx) => {
    const seconds = parseDuration(text);
    if (seconds === undefined) {
      ctx.addIssue({ code: 'custom', message: `"${text}" must be a duration like ${example} (s, m or h)` });
      return z.NEVER;
    }
    return seconds;
  });

const url = z
  .string()
  .refine((text) => /^https?:\/\/[^\s/]+/.test(text) && URL.canParse(text), {
    message: 'must be an http:// or https:// URL',
  })
  // fetch refuses such a URL, and its error would quote the password into a waiting request's reason.
  .refine((text) => !URL.canParse(text) || (new URL(text).username === '' && new URL(text).password === ''), {
    message: 'must not carry credentials (user:password@): the gates send none',
  });

const regexp = z.string().refine(
  (text) => {
    try {
      new RegExp(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be a valid regular expression' },
);

const matcher = z.string().transform((text, ctx) => {
  const parsed = parseMatcher(text);
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }
  return parsed;
});

/** Fields every gate has. */
const common = {
  /** Shown in `plan` and in a waiting request's reason; the kind when unset. */
  name: z.string().min(1).max(63).optional(),
  timeout,
};

const prometheusAlerts = z.strictObject({
  kind: z.literal('prometheus-alerts'),
  ...common,
  url,
  /** kured's --alert-filter-regexp: alert names it matches are ignored (or, with alertFilterMatchOnly, the only ones counted). */
  alertFilterRegexp: regexp.optional(),
  /** kured's --alert-filter-match-only. */
  alertFilterMatchOnly: z.boolean().optional(),
  /** kured's --alert-firing-only: pending alerts do not block. */
  firingOnly: z.boolean().optional(),
  /** Label matchers an alert must all meet to count (`severity=critical`, `namespace!~kube-.*`). */
  matchers: z.array(matcher).optional(),
});

const alertmanager = z.strictObject({
  kind: z.literal('alertmanager'),
  ...common,
  url,
  /** As the prometheus-alerts gate's: alert names it matches are ignored (or, with alertFilterMatchOnly, the only ones counted). */
  alertFilterRegexp: regexp.optional(),
  alertFilterMatchOnly: z.boolean().optional(),
  /** Label matchers an alert must all meet to count. */
  matchers: z.array(matcher).optional(),
});

const promql = z.strictObject({
  kind: z.literal('promql'),
  ...common,
  url,
  /** Blocks while its result has a sample other than 0 (an empty result lets through). */
  expr: z.string().trim().min(1, 'must be a PromQL expression'),
});

const notReadyNodes = z.strictObject({
  kind: z.literal('not-ready-nodes'),
  ...common,
  /** Blocks while more than this many nodes other than the requested one are NotReady. */
  max: z.number().int().min(0).max(10_000),
});

const pdbsAtZero = z.strictObject({
  kind: z.literal('pdbs-at-zero'),
  ...common,
  /** Blocks while a PodDisruptionBudget not covering the node's own pods has allowed no disruption for longer than this. */
  for: duration('10m').optional(),
});

const failureDomain = z.strictObject({
  kind: z.literal('failure-domain'),
  ...common,
  /** The label whose value names a node's failure domain. */
  key: z.string().min(1).optional(),
});

const http = z.strictObject({
  kind: z.literal('http'),
  ...common,
  /** Answers 200 to say go; anything else (or nothing) blocks. */
  url,
});

export const gateSpec = z.discriminatedUnion(
  'kind',
  [prometheusAlerts, alertmanager, promql, notReadyNodes, pdbsAtZero, failureDomain, http],
  {
    error:
      'kind must be one of prometheus-alerts, alertmanager, promql, not-ready-nodes, pdbs-at-zero, failure-domain, http',
  },
);

export const gateSpecs = z
  .array(gateSpec, { error: 'must be a list of gates (YAML or JSON), e.g. [{kind: not-ready-nodes, max: 1}]' })
  .superRefine((gates, ctx) => {
    const seen = new Set<string>();
    gates.forEach((gate, index) => {
      const name = gate.name ?? gate.kind;
      if (seen.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `"${name}" names two gates: give each gate of the same kind its own name`,
        });
      }
      seen.add(name);
    });
  });

export type GateSpec = z.output<typeof gateSpec>;
export type GateKind = GateSpec['kind'];
export type GateSpecOf<K extends GateKind> = Extract<GateSpec, { kind: K }>;
