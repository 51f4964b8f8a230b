/** `drainbridge check`: is this cluster (and Nova) ready for drainbridge? Reads only. */

import { INSTALL_COMMAND, type PreflightReport, runPreflight } from '../../lib/preflight/index.ts';
import { SERVICES, type Service } from '../../lib/preflight/service-access.ts';
import { checkService } from '../../lib/preflight/service-check.ts';
import { connectKube } from '../../lib/sources/forwarder/kube.ts';
import { loadForwarderSettings } from '../../lib/sources/forwarder/settings.ts';
import { type Cluster, connect, describeReport, fixLines } from '../cluster.ts';
import { type Command, type CommandContext, processContext, UsageError } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { EXIT } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, flagValue, isOn, parseCommandLine } from '../flags.ts';
import { dataFormatOf, dataOutputFlag, renderData } from '../output/data-format.ts';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'disable-eviction',
    kind: 'switch',
    help: 'also check what --disable-eviction needs (deleting pods)',
  },
  {
    name: 'for',
    kind: 'value',
    value: 'SERVICE',
    help: 'check what a service needs instead, as these credentials: run, forwarder or node-agent',
  },
  dataOutputFlag('the checks and their fixes'),
  ...CLUSTER_FLAGS,
];

export const checkCommand: Command = {
  name: 'check',
  summary: 'check the cluster is ready for drainbridge (CRD, namespace, RBAC, Nova); changes nothing',
  usage: [
    'Usage: drainbridge check [--disable-eviction] [--for run|forwarder|node-agent] [-o, --output json|yaml] [--kubeconfig FILE] [--context NAME]',
    '',
    'What every other command checks before it changes anything, for all of them at once: the API server',
    'answers (and as whom), the Evacuation CRD is installed, the namespace of the admission Lease exists',
    '(DRAINBRIDGE_NAMESPACE), RBAC allows each call drainbridge makes (one SelfSubjectAccessReview per',
    'call), and, with DRAINBRIDGE_NOVA=true, that Keystone and Nova answer. For whatever is missing it',
    `prints the command that installs it, usually: ${INSTALL_COMMAND}`,
    '',
    '--for SERVICE checks what `drainbridge run`, `drainbridge forwarder` or the node agent (`forwarder',
    '--node-agent`) checks before it starts leading, with the same words its /readyz uses: each call of each',
    'part it would run (DRAINBRIDGE_NODE_MAINTENANCE=false leaves the NodeMaintenance source out), and the',
    'command that grants a missing one. Run it with the credentials the service uses (docs/preflight.md).',
  ].join('\n'),
  flags: FLAGS,
  exits: ['ok', 'usage', 'notReady'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const service = serviceOf(flagValue(parsed, 'for'));
    const format = dataFormatOf(parsed);
    const cluster = await connect(parsed, context);
    if (service) return checkServiceCommand(cluster, service, context, format);
    const needs = { operation: 'check' as const, disableEviction: isOn(parsed, 'disable-eviction') };
    const report = await runPreflight({ ...cluster, env: context.env }, needs);
    if (format !== 'text') return printData(report, { nova: cluster.config.nova.enabled }, format, context);
    for (const line of describeReport(report)) context.out(line);
    if (!cluster.config.nova.enabled) context.out('  -        Nova: not enabled (DRAINBRIDGE_NOVA=false)');
    if (report.ready) {
      context.out('ready: drainbridge can evacuate, restore, abort, plan and show status on this cluster');
      return EXIT.ok;
    }
    const fixes = fixesOf(report);
    context.out('not ready. To fix it:');
    for (const line of fixLines(fixes)) context.out(line);
    return EXIT.notReady;
  },
};

function serviceOf(text: string | undefined): Service | undefined {
  if (text === undefined) return undefined;
  const service = SERVICES.find((name) => name === text);
  if (!service) throw new UsageError(`--for: must be one of ${SERVICES.join(', ')} (got '${text}')`);
  return service;
}

function fixesOf(report: PreflightReport): string[] {
  return [...new Set(report.results.flatMap((r) => (!r.ok && r.fix ? [r.fix] : [])))];
}

/** `-o json|yaml`: the report as data, with its fixes; the exit status as in text. */
function printData(
  report: PreflightReport,
  extra: Record<string, unknown>,
  format: Exclude<ReturnType<typeof dataFormatOf>, 'text'>,
  context: CommandContext,
): number {
  context.out(renderData({ ...report, ...extra, fixes: fixesOf(report) }, format));
  return report.ready ? EXIT.ok : EXIT.notReady;
}

/** `check --for SERVICE`: the service's startup preflight, as these credentials. */
async function checkServiceCommand(
  cluster: Cluster,
  service: Service,
  context: CommandContext,
  format: ReturnType<typeof dataFormatOf>,
): Promise<number> {
  const settings = loadForwarderSettings(context.env);
  const client = await connectKube(cluster.config);
  let report: PreflightReport;
  try {
    const readiness = await checkService(client, service, {
      namespace: cluster.config.namespace,
      nodeMaintenance: service !== 'node-agent' && settings.nodeMaintenance,
    });
    report = {
      server: client.server.origin,
      ...(readiness.user ? { user: readiness.user } : {}),
      results: readiness.results,
      ready: readiness.results.every((r) => r.ok),
    };
  } finally {
    client.close();
  }
  if (format !== 'text') return printData(report, { service }, format, context);
  for (const line of describeReport(report)) context.out(line);
  if (report.ready) {
    context.out(`ready: drainbridge ${service} can start with these credentials`);
    return EXIT.ok;
  }
  const fixes = fixesOf(report);
  context.out(
    `not ready for drainbridge ${service}. To fix it (as a cluster admin; the roles come with ${INSTALL_COMMAND}):`,
  );
  for (const line of fixLines(fixes)) context.out(line);
  return EXIT.notReady;
}
