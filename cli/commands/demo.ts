/**
 * `drainbridge demo` (`npm start`): the whole product on one machine, no AWS account and no cluster.
 * A simulated cluster, a plan that finds a blocker, an evacuation through PDB waits that explains what
 * blocks it, the operator clearing the blocker, then restore and a summary.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { estimateHistoryEvents, type TaskCall } from '../../embedded/executor.ts';
import { EmbeddedRuntime } from '../../embedded/runtime.ts';
import { planEvacuation } from '../../lib/branches/plan.ts';
import { renderPlanText } from '../../lib/branches/render.ts';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { startDrainbridgeCluster } from '../../sim/drainbridge.ts';
import { type Command, type CommandContext, processContext } from '../command.ts';
import { configFor } from '../embedded.ts';
import { EXIT, exitForSignal } from '../exit-codes.ts';
import { expectPositionals, type FlagSpec, flagValue, numberFlag, parseCommandLine } from '../flags.ts';
import { createRenderer, OUTPUT_FLAG, OUTPUT_HELP, outputModeOf, type RunOutput } from '../output/index.ts';
import type { EventSource } from '../output/renderer.ts';

const NODE = 'node-1';
const REQUEST = 'demo-node-1';
/** What the demo's Maintenance Requested and Maintenance Ended say alike: the one request, by hand, for NODE. */
const DEMO_REQUEST = {
  version: '1',
  requestId: REQUEST,
  requester: 'demo',
  origin: 'manual',
  target: { nodeName: NODE },
} as const;

interface DemoTally {
  pdbWaits: number;
  polls: number;
  blockerCleared: boolean;
}

const FLAGS: readonly FlagSpec[] = [
  { name: 'speed', kind: 'value', value: 'X', help: "the simulated cluster's clock speed (default 20)" },
  OUTPUT_FLAG,
];

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
  usage: [
    "Usage: drainbridge demo [--speed X] [--output auto|live|plain|json]   (X: the simulated cluster's clock speed, greater than 0 and at most 1000; default 20)",
    OUTPUT_HELP,
  ].join('\n'),
  flags: FLAGS,
  exits: ['ok', 'failed', 'usage'],
  async run(argv, context: CommandContext = processContext()) {
    const parsed = parseCommandLine(argv, FLAGS);
    expectPositionals(parsed, []);
    const speedFlag = flagValue(parsed, 'speed');
    const speed = speedFlag === undefined ? 20 : numberFlag('speed', speedFlag, { above: 0, max: 1000 });
    const started = Date.now();
    // The tasks run on the simulated cluster's clock, so the records do: how long a wait has lasted is
    // read on it (the wall clock would say a wait 20× too short, or none).
    const recordClock = { now: Date.now };
    // One output for the whole demo: its own lines too go the renderer's way (as JSON with --output json).
    const output = createRenderer(context, {
      mode: outputModeOf(parsed, context),
      start: started,
      title: `drainbridge demo: ${NODE}`,
      recordClock: () => recordClock.now(),
    });
    // Ctrl-C ends the demo at once, as before; exiting (not dying of the signal) lets the simulated
    // cluster's kubeconfig directory be removed on the way out (sim/drainbridge.ts).
    const onSignal = (signal: NodeJS.Signals): void => process.exit(exitForSignal(signal));
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      return await runDemo(output, { speed, started, recordClock });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      output.close();
    }
  },
};

interface DemoRun {
  readonly speed: number;
  readonly started: number;
  /** Set to the simulated cluster's clock once it runs. */
  readonly recordClock: { now: () => number };
}

async function runDemo(output: RunOutput, { speed, started, recordClock }: DemoRun): Promise<number> {
  const say = (text: string) => {
    for (const line of text.split('\n')) output.out(line);
  };
  const heading = (text: string) => say(`\n== ${text}`);
  heading(
    'a simulated cluster: 3 nodes, web ×6 behind a PDB (minAvailable 5), a DaemonSet, a bare debug pod on node-1',
  );
  const cluster = await startDrainbridgeCluster({ scenario: 'demo', speed });
  recordClock.now = () => cluster.sim.clock.now();
  const tally: DemoTally = { pdbWaits: 0, polls: 0, blockerCleared: false };
  try {
    const client = kubeClientFor(cluster.kubeconfigPath);
    const admin = kubeClientFor(cluster.adminKubeconfigPath);
    say(`API server ${cluster.sim.url}; drainbridge runs as ServiceAccount drainbridge/drainbridge (deploy/base/rbac)`);
    say(`pods on ${NODE}: ${(await podsOn(client, NODE)).join(', ')}`);

    heading(`drainbridge plan ${NODE} --ignore-daemonsets`);
    const config = configFor(cluster.kubeconfigPath, {});
    const options = { ...KUBECTL_DRAIN_DEFAULTS, ignoreDaemonSets: true };
    const settings = { options, infraPodSelector: '', serverDryRun: true };
    const planned = await planEvacuation(config, client, NODE, settings);
    say(renderPlanText(planned));
    // kubectl drain (and so an evacuation) fails at once on the bare pod: the operator reads the plan first.
    if (planned.plan.branches.some((branch) => branch.blockers.some((blocker) => blocker.code === 'BarePod'))) {
      say(
        '→ operator: the plan names the bare pod default/debug; it is disposable: `kubectl delete pod debug -n default`',
      );
      await admin.core.deleteNamespacedPod({ name: 'debug', namespace: 'default' });
      await waitUntilGone(admin, 'default', 'debug');
      tally.blockerCleared = true;
    }

    heading(`drainbridge evacuate ${NODE} --ignore-daemonsets   (the Evacuate state machine, embedded)`);
    const events: EventSource = output.events;
    const runtime = await EmbeddedRuntime.create({
      config,
      retryIntervalMs: 300,
      now: () => new Date(cluster.sim.clock.now()),
      onBusEvent: events.bus,
      onTask: (call: TaskCall) => {
        events.task(call);
        countWaits(call, tally);
      },
    });
    runtime.deps.progress.watch(events.record);
    try {
      await runtime.put('Maintenance Requested', { ...DEMO_REQUEST, reason: 'demo: kernel upgrade', drain: options });
      const evacuation = runtime.executionsFor(REQUEST)[0];
      const outcome = await evacuation?.outcome;
      if (!outcome?.ok) throw new Error(`the demo evacuation failed: ${outcome?.error.message}`);
      say(
        `pods left on ${NODE}: ${(await podsOn(client, NODE)).join(', ')} (DaemonSet pods stay, as with kubectl drain)`,
      );

      heading(`drainbridge restore ${NODE}   (the Restore state machine)`);
      await runtime.put('Maintenance Ended', DEMO_REQUEST);
      await runtime.settle();
      const node = await client.getNode(NODE);
      say(
        `${NODE}: unschedulable=${node.spec?.unschedulable === true}, phase=${node.metadata?.annotations?.['drainbridge.io/phase']}`,
      );

      heading('summary');
      const stats = evacuation?.stats;
      say(
        [
          `evacuation + restore of ${NODE} in ${((Date.now() - started) / 1000).toFixed(1)} s (simulated cluster at ${speed}× speed)`,
          `blocker explained and cleared by the operator: ${tally.blockerCleared ? 'yes (bare pod default/debug)' : 'no'}`,
          `polls that found nothing to do (NotYetDone, retried with backoff): ${tally.polls}, of them waiting on the PDB: ${tally.pdbWaits}`,
          `Evacuate execution: ${stats?.stateTransitions} state transitions, ${stats?.lambdaInvocations} Lambda invocations, ≈${stats ? estimateHistoryEvents(stats) : '?'} history events (Step Functions allows 25,000)`,
        ].join('\n'),
      );
      return EXIT.ok;
    } finally {
      runtime.stop();
    }
  } finally {
    await cluster.stop();
  }
}

/** Counts the polls that found nothing to do, and of them those a budget held. */
function countWaits(call: TaskCall, tally: DemoTally): void {
  if (call.error?.name !== 'NotYetDone') return;
  tally.polls++;
  if (/disruption budget/i.test(call.error.message)) tally.pdbWaits++;
}

/** Waits until the pod is gone (its grace period over), as `kubectl delete pod` returns. */
async function waitUntilGone(admin: KubeClient, namespace: string, name: string): Promise<void> {
  for (;;) {
    const present = await admin.core.readNamespacedPod({ name, namespace }).then(
      () => true,
      (error: { code?: number }) => {
        if (error.code === 404) return false;
        throw error;
      },
    );
    if (!present) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
