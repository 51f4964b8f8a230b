/** `drainbridge evacuate NODE`: run the Evacuate state machine embedded against a cluster (and Nova). */
import { drainOptionsFromFlags } from '../../lib/drain/flags.ts';
import { InvalidInput } from '../../lib/errors/index.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor, exitCodeOf, requesterName, startEmbedded } from '../embedded.ts';
import { planCommand } from './plan.ts';

const OWN = {
  reason: true,
  'request-id': true,
  kubeconfig: true,
  'dry-run': false,
  deadline: true,
  'kubevirt-restart-unmigratable': false,
};

export const evacuateCommand: Command = {
  name: 'evacuate',
  summary: 'cordon a node and move everything off it (pods, Nova servers), embedded; prints progress',
  usage: [
    'Usage: drainbridge evacuate NODE [--reason TEXT] [--request-id ID] [--deadline ISO-8601]',
    '                            [--kubeconfig FILE] [--dry-run] [kubectl drain flags]',
    '',
    'Runs the same Evacuate state machine that deploys to AWS, in this process. The node stays cordoned',
    'afterwards (and on failure); `drainbridge restore NODE` ends the maintenance.',
    '  --request-id ID  the idempotency key (default manual-NODE-<time>); run again with the same ID to',
    '                   resume after a crash: nothing done already is done twice',
    '  --dry-run        print the plan (as `drainbridge plan`) and change nothing',
    '  --kubevirt-restart-unmigratable  opt-in: KubeVirt VMs that cannot live-migrate (None, or',
    '                   LiveMigrateIfPossible not migratable) are restarted on another node when their',
    '                   VirtualMachine runs them always (DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE); off:',
    '                   they are blockers, never shut down',
    'kubectl drain flags (kubectl defaults): --force, --ignore-daemonsets, --delete-emptydir-data,',
    '  --grace-period=-1, --timeout=0s, --pod-selector=SELECTOR, --disable-eviction,',
    '  --skip-wait-for-delete-timeout=0, --chunk-size=500',
    'Environment: DRAINBRIDGE_* settings (README "Configuration"); DRAINBRIDGE_NOVA=true with OS_* for Nova.',
    'Exit status: 0 evacuated, 1 failed or refused, 2 usage error.',
  ].join('\n'),
  async run(argv) {
    const args = parseArgs(argv, OWN);
    if (args.positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${args.positional.length}`);
    const node = args.positional[0] ?? '';
    if (args.own.has('dry-run')) {
      const kubeconfig = args.own.get('kubeconfig');
      const drainArgs = args.drainFlags.map(([name, value]) =>
        value === undefined ? `--${name}` : `--${name}=${value}`,
      );
      const restart = args.own.has('kubevirt-restart-unmigratable') ? ['--kubevirt-restart-unmigratable'] : [];
      return planCommand.run([node, ...drainArgs, ...restart, ...(kubeconfig ? [`--kubeconfig=${kubeconfig}`] : [])]);
    }
    let drain: ReturnType<typeof drainOptionsFromFlags>;
    try {
      drain = drainOptionsFromFlags(args.drainFlags);
    } catch (error) {
      if (error instanceof InvalidInput) throw new UsageError(error.message);
      throw error;
    }
    const { runtime } = await startEmbedded(configFor(args.own.get('kubeconfig'), process.env, args.own));
    const requestId =
      args.own.get('request-id') ?? `manual-${node}-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}`;
    const deadline = args.own.get('deadline');
    try {
      await runtime.put('Maintenance Requested', {
        version: '1',
        requestId,
        requester: requesterName(),
        origin: 'manual',
        target: { nodeName: node },
        reason: args.own.get('reason') ?? 'drainbridge evacuate',
        ...(deadline ? { deadline } : {}),
        drain,
      });
      console.log(`evacuating ${node} (request ${requestId})`);
      return await exitCodeOf(runtime.executionsFor(requestId)[0], 'evacuation', runtime);
    } finally {
      runtime.stop();
    }
  },
};
