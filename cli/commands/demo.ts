/**
 * `drainbridge demo` (`npm start`): the whole product on one machine, no AWS account and no cluster.
 * A simulated cluster, a plan that finds a blocker, an evacuation through PDB waits that explains what
 * blocks it, the operator clearing the blocker, then restore and a summary.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { estimateHistoryEvents, type TaskCall } from '../../embedded/executor.ts';
import { busLine, createProgressPrinter, taskLine } from '../../embedded/progress.ts';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/domain/request.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { planEvacuation } from '../../lib/workflow/branches/plan.ts';
import { renderPlanText } from '../../lib/workflow/branches/render.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor } from '../embedded.ts';

const NODE = 'node-1';
const REQUEST = 'demo-node-1';
const BLOCKER_TEXT = 'declare no controller';

interface DemoTally {
  pdbWaits: number;
  polls: number;
  blockerCleared: boolean;
}

function heading(text: string): void {
  console.log(`\n== ${text}`);
}

function kubeClientFor(kubeconfigPath: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return new KubeClient(kc);
}

async function podsOn(client: KubeClient, node: string): Promise<string[]> {
  const pods = await client.listPodsOnNode(node);
  return pods.filter((p) => !p.metadata?.deletionTimestamp).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'run a whole evacuation and restore on a simulated cluster, embedded (what `npm start` runs)',
  usage: "Usage: drainbridge demo [--speed X]   (X: the simulated cluster's clock speed, default 20)",
  async run(argv) {
    const args = parseArgs(argv, { speed: true });
    const speed = Number(args.own.get('speed') ?? '20');
    if (!(speed > 0 && speed <= 1000)) throw new UsageError('--speed must be a number between 0 and 1000');
    const started = Date.now();
    heading(
      'a simulated cluster: 3 nodes, web ×6 behind a PDB (minAvailable 5), a DaemonSet, a bare debug pod on node-1',
    );
    const cluster = await startDrainbridgeCluster({ scenario: 'demo', speed });
    const tally: DemoTally = { pdbWaits: 0, polls: 0, blockerCleared: false };
    try {
      const client = kubeClientFor(cluster.kubeconfigPath);
      const admin = kubeClientFor(cluster.adminKubeconfigPath);
      console.log(
        `API server ${cluster.sim.url}; drainbridge runs as ServiceAccount drainbridge/drainbridge (deploy/rbac)`,
      );
      console.log(`pods on ${NODE}: ${(await podsOn(client, NODE)).join(', ')}`);

      heading(`drainbridge plan ${NODE} --ignore-daemonsets`);
      const config = configFor(cluster.kubeconfigPath, {});
      const options = { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true };
      const settings = { options, infraPodSelector: '', serverDryRun: true };
      console.log(renderPlanText(await planEvacuation(config, client, NODE, settings)));

      heading(`drainbridge evacuate ${NODE} --ignore-daemonsets   (the Evacuate state machine, embedded)`);
      const print = createProgressPrinter((line) => console.log(line), started);
      const runtime = await EmbeddedRuntime.create({
        config,
        retryIntervalMs: 300,
        now: () => new Date(cluster.sim.clock.now()),
        onBusEvent: (type, detail) => print(busLine(type, detail as Record<string, unknown>)),
        onTask: (call: TaskCall) => {
          print(taskLine(call));
          void reactTo(call, tally, admin);
        },
      });
      try {
        await runtime.put('Maintenance Requested', {
          version: '1',
          requestId: REQUEST,
          requester: 'demo',
          origin: 'manual',
          target: { nodeName: NODE },
          reason: 'demo: kernel upgrade',
          drain: options,
        });
        const evacuation = runtime.executionsFor(REQUEST)[0];
        const outcome = await evacuation?.outcome;
        if (!outcome?.ok) throw new Error(`the demo evacuation failed: ${outcome?.error.message}`);
        console.log(
          `pods left on ${NODE}: ${(await podsOn(client, NODE)).join(', ')} (DaemonSet pods stay, as with kubectl drain)`,
        );

        heading(`drainbridge restore ${NODE}   (the Restore state machine)`);
        await runtime.put('Maintenance Ended', {
          version: '1',
          requestId: REQUEST,
          requester: 'demo',
          origin: 'manual',
          target: { nodeName: NODE },
        });
        await runtime.settle();
        const node = await client.getNode(NODE);
        console.log(
          `${NODE}: unschedulable=${node.spec?.unschedulable === true}, phase=${node.metadata?.annotations?.['drainbridge.io/phase']}`,
        );

        heading('summary');
        const stats = evacuation?.stats;
        console.log(
          [
            `evacuation + restore of ${NODE} in ${((Date.now() - started) / 1000).toFixed(1)} s (simulated cluster at ${speed}× speed)`,
            `blocker explained and cleared by the operator: ${tally.blockerCleared ? 'yes (bare pod default/debug)' : 'no'}`,
            `polls that found nothing to do (NotYetDone, retried with backoff): ${tally.polls}, of them waiting on the PDB: ${tally.pdbWaits}`,
            `Evacuate execution: ${stats?.stateTransitions} state transitions, ${stats?.lambdaInvocations} Lambda invocations, ≈${stats ? estimateHistoryEvents(stats) : '?'} history events (Step Functions allows 25,000)`,
          ].join('\n'),
        );
        return 0;
      } finally {
        runtime.stop();
      }
    } finally {
      await cluster.stop();
    }
  },
};

/** The demo's operator: counts waits and, once, clears the blocker the evacuation explained. */
async function reactTo(call: TaskCall, tally: DemoTally, admin: KubeClient): Promise<void> {
  if (call.error?.name !== 'NotYetDone') return;
  tally.polls++;
  if (/disruption budget/i.test(call.error.message)) tally.pdbWaits++;
  if (!tally.blockerCleared && call.error.message.includes(BLOCKER_TEXT)) {
    tally.blockerCleared = true;
    console.log('   → operator: the debug pod is disposable; `kubectl delete pod debug -n default`');
    await admin.core.deleteNamespacedPod({ name: 'debug', namespace: 'default' });
  }
}
