/** `drainbridge check`: is this cluster (and Nova) ready for drainbridge? Reads only. */
import { INSTALL_COMMAND, runPreflight } from '../../lib/preflight/index.ts';
import { connect, describeReport, fixLines } from '../cluster.ts';
import { type Command, type CommandContext, processContext } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, isOn, parseCommandLine } from '../flags.ts';
import { dataFormatOf, dataOutputFlag, renderData } from '../output/data-format.ts';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'disable-eviction',
    kind: 'switch',
    help: 'also check what --disable-eviction needs (deleting pods)',
  },
  dataOutputFlag('the checks and their fixes'),
  ...CLUSTER_FLAGS,
];

export const checkCommand: Command = {
  name: 'check',
  summary: 'check the cluster is ready for drainbridge (CRD, namespace, RBAC, Nova); changes nothing',
  usage: [
    'Usage: drainbridge check [--disable-eviction] [-o, --output json|yaml] [--kubeconfig FILE] [--context NAME]',
    '',
    'What every other command checks before it changes anything, for all of them at once: the API server',
    'answers (and as whom), the Evacuation CRD is installed, the namespace of the admission Lease exists',
    '(DRAINBRIDGE_NAMESPACE), RBAC allows each call drainbridge makes (one SelfSubjectAccessReview per',
    'call), and, with DRAINBRIDGE_NOVA=true, that Keystone and Nova answer. For whatever is missing it',
    `prints the command that installs it, usually: ${INSTALL_COMMAND}`,
  ].join('\n'),
  flags: FLAGS,
  exits: ['ok', 'usage', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const cluster = await connect(parsed, context);
    const needs = { operation: 'check' as const, disableEviction: isOn(parsed, 'disable-eviction') };
    const report = await runPreflight({ ...cluster, env: context.env }, needs);
    const format = dataFormatOf(parsed);
    if (format !== 'text') {
      const fixes = [...new Set(report.results.flatMap((r) => (!r.ok && r.fix ? [r.fix] : [])))];
      context.out(renderData({ ...report, nova: cluster.config.nova.enabled, fixes }, format));
      return report.ready ? EXIT.ok : EXIT.notReady;
    }
    for (const line of describeReport(report)) context.out(line);
    if (!cluster.config.nova.enabled) context.out('  -        Nova: not enabled (DRAINBRIDGE_NOVA=false)');
    if (report.ready) {
      context.out('ready: drainbridge can evacuate, restore, abort, plan and show status on this cluster');
      return EXIT.ok;
    }
    const fixes = [...new Set(report.results.flatMap((r) => (!r.ok && r.fix ? [r.fix] : [])))];
    context.out('not ready. To fix it:');
    for (const line of fixLines(fixes)) context.out(line);
    return EXIT.notReady;
  },
};
