/** `drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig F]`: what an evacuation would do. */
import { KubeConfig } from '@kubernetes/client-node';
import { isBlocked } from '../../lib/domain/plan.ts';
import { drainOptionsFromFlags, takesValue } from '../../lib/drain/flags.ts';
import { planNode } from '../../lib/drain/plan-node.ts';
import { renderPlanJson, renderPlanText } from '../../lib/drain/render.ts';
import { InvalidInput } from '../../lib/errors/index.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { type Command, UsageError } from '../command.ts';

/** Exit code when the plan has blockers (1 is an error, 2 a usage error). */
export const EXIT_BLOCKED = 3;

const OWN_FLAGS = new Set(['json', 'kubeconfig', 'infra-pod-selector', 'server-dry-run']);

export interface PlanArgs {
  readonly nodeName: string;
  readonly drainFlags: readonly (readonly [string, string | undefined])[];
  readonly json: boolean;
  readonly kubeconfig?: string;
  readonly infraPodSelector: string;
  readonly serverDryRun: boolean;
}

function splitFlag(arg: string): [string, string | undefined] {
  const body = arg.replace(/^--?/, '');
  const eq = body.indexOf('=');
  return eq < 0 ? [body, undefined] : [body.slice(0, eq), body.slice(eq + 1)];
}

/** Parses the command line (pure). */
export function parsePlanArgs(argv: readonly string[]): PlanArgs {
  const positional: string[] = [];
  const flags: [string, string | undefined][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = splitFlag(arg);
    const needsValue = takesValue(name) || name === 'kubeconfig' || name === 'infra-pod-selector';
    const value = inline ?? (needsValue ? argv[++i] : undefined);
    if (needsValue && value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.push([name, value]);
  }
  if (positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${positional.length}`);
  const own = new Map(flags.filter(([name]) => OWN_FLAGS.has(name)));
  return {
    nodeName: positional[0] ?? '',
    drainFlags: flags.filter(([name]) => !OWN_FLAGS.has(name)),
    json: own.has('json') && own.get('json') !== 'false',
    kubeconfig: own.get('kubeconfig'),
    infraPodSelector: own.get('infra-pod-selector') ?? '',
    serverDryRun: own.get('server-dry-run') !== 'false',
  };
}

function loadKubeConfig(path: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'show what evacuating a node would do (pods to evict, skipped, blockers); changes nothing',
  usage: [
    'Usage: drainbridge plan NODE [kubectl drain flags] [--json] [--kubeconfig FILE]',
    '',
    'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data,',
    '  --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR, --disable-eviction,',
    '  --skip-wait-for-delete-timeout=0, --chunk-size=500',
    'drainbridge flags: --infra-pod-selector=SELECTOR (pods held back until the VM branches finish),',
    '  --server-dry-run=false (skip the API server dry-run evictions), --json',
    '',
    `Exit status: 0 not blocked, ${EXIT_BLOCKED} blocked, 1 error, 2 usage error.`,
  ].join('\n'),
  async run(argv) {
    const args = parsePlanArgs(argv);
    let options: ReturnType<typeof drainOptionsFromFlags>;
    try {
      options = drainOptionsFromFlags(args.drainFlags);
    } catch (error) {
      if (error instanceof InvalidInput) throw new UsageError(error.message);
      throw error;
    }
    const client = new KubeClient(loadKubeConfig(args.kubeconfig), { chunkSize: options.chunkSize });
    const nodePlan = await planNode(client, args.nodeName, {
      options,
      infraPodSelector: args.infraPodSelector,
      serverDryRun: args.serverDryRun,
    });
    console.log(args.json ? renderPlanJson(nodePlan) : renderPlanText(nodePlan));
    return isBlocked(nodePlan.plan) ? EXIT_BLOCKED : 0;
  },
};
