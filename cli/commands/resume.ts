/** `drainbridge resume`: re-open admission after the circuit breaker paused it. */
import { resumeAdmission } from '../../lib/admission/index.ts';
import { connect, preflight } from '../cluster.ts';
import { type Command, type CommandContext, processContext } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { requesterName } from '../embedded.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, parseCommandLine } from '../flags.ts';

const FLAGS: readonly FlagSpec[] = [...CLUSTER_FLAGS];

export const resumeCommand: Command = {
  name: 'resume',
  summary: 'admit nodes again after the circuit breaker paused admission (DRAINBRIDGE_BREAKER)',
  usage: [
    'Usage: drainbridge resume [--kubeconfig FILE] [--context NAME]',
    '',
    'Closes the circuit breaker: admission, paused after DRAINBRIDGE_BREAKER failed evacuations within',
    'its window, admits nodes again — the requests waiting in line go first, in their order — and the',
    'failures counted so far are forgotten. Look at why they failed first (`drainbridge status`,',
    '`drainbridge report NODE`). Not paused, it changes nothing and says so. The first admission',
    "after it publishes `Admission Resumed` on the bus (EventBridge on AWS, run's own bus embedded).",
  ].join('\n'),
  flags: FLAGS,
  operands: [],
  exits: ['ok', 'failed', 'usage', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const cluster = await connect(parsed, context);
    if (!(await preflight(cluster, { operation: 'resume' }, context, 'drainbridge resume'))) return EXIT.notReady;
    const by = requesterName();
    const resumed = await resumeAdmission(cluster.client, cluster.config.namespace, by, () => new Date());
    if (resumed.wasPaused === undefined) {
      context.out('admission is not paused; nothing was changed');
      return EXIT.ok;
    }
    if (!resumed.written) {
      context.err('drainbridge resume: the admission Lease stayed locked; nothing was changed — run it again');
      return EXIT.failed;
    }
    // The bus event goes out from the workflow (its first Admit step after this), which has the bus.
    context.out(`admission resumed by ${by}; it was paused: ${resumed.wasPaused}`);
    context.out('the next admission publishes Admission Resumed on the bus');
    return EXIT.ok;
  },
};
