/**
 * Differential suite: the real `kubectl drain` and drainbridge's eviction passes on identical
 * simulator scenarios must evict the same pods and refuse the same pods for the same reasons.
 * drainbridge runs as its ServiceAccount under deploy/base/rbac; kubectl runs as the admin.
 *
 * Pod names made by controllers carry random suffixes, so pods are compared by stable names
 * (`namespace/generateName*`). kubectl 1.32 prints the "declare no controller" error with a doubled
 * "cannot delete" prefix (fixed upstream later); the comparison collapses it.
 *
 * A filter refusal fails both at once: kubectl exits 1 with `error: unable to drain node "N" due to
 * error: …` before it evicts anything; drainbridge's first pass throws EvacuationFailed with the same
 * sentence (its errors in another order: kubectl's come from a Go map, in random order).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createEvictionPass } from '../../lib/branches/pods/eviction-pass.ts';
import { drainOptionsFromFlags } from '../../lib/branches/pods/flags.ts';
import { EvacuationFailed } from '../../lib/errors/index.ts';
import type { Blocker } from '../../lib/model/plan.ts';
import type { DrainOptions } from '../../lib/model/request.ts';
import { acquireHold } from '../../lib/node/hold.ts';
import { EvacuationProgressStore } from '../../lib/progress/evacuation-store.ts';
import type { Simulator } from '../../sim/index.ts';
import { waitUntil } from '../support/wait.ts';
import {
  type DrainSim,
  evictedBy,
  kubectlAvailable,
  kubectlDrain,
  rememberPods,
  requestFor,
  runUntilSettled,
  SA_USER,
  stabilise,
  startDrainSim,
} from './harness.ts';

const NODE = 'node-1';
const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];
const FILTER_CODES = new Set(['BarePod', 'DaemonSetPod', 'OrphanedDaemonSetPod', 'EmptyDirData', 'Other']);

type Manifest = Record<string, unknown>;

function deployment(
  name: string,
  replicas: number,
  extra: { emptyDir?: boolean; labels?: Record<string, string> } = {},
): Manifest {
  const labels = { app: name, ...extra.labels };
  const volumes = extra.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels }, spec: { containers: CONTAINERS, volumes } },
    },
  };
}

function statefulSet(name: string, replicas: number): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: 'shop' },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: CONTAINERS } },
    },
  };
}

const daemonSet: Manifest = {
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'monitoring' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: { metadata: { labels: { app: 'agent' } }, spec: { containers: CONTAINERS } },
  },
};

function barePod(
  name: string,
  extra: {
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    owner?: Manifest;
    grace?: number;
    finalizers?: string[];
  } = {},
): Manifest {
  const metadata: Manifest = {
    name,
    namespace: extra.namespace ?? 'default',
    labels: extra.labels ?? {},
    annotations: extra.annotations ?? {},
  };
  if (extra.owner) metadata.ownerReferences = [extra.owner];
  if (extra.finalizers) metadata.finalizers = extra.finalizers;
  const spec: Manifest = { nodeName: NODE, containers: CONTAINERS };
  if (extra.grace !== undefined) spec.terminationGracePeriodSeconds = extra.grace;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

function pdb(name: string, matchLabels: Record<string, string>, minAvailable: number): Manifest {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'shop' },
    spec: { minAvailable, selector: { matchLabels } },
  };
}

interface Case {
  readonly name: string;
  readonly scenario: Partial<Record<'workloads' | 'pdbs' | 'pods', Manifest[]>> & {
    staticPods?: Manifest[];
    namespaces?: string[];
  };
  /** kubectl drain flags (drainbridge gets the same options). */
  readonly flags: readonly string[];
  /** Extra kubectl flags only (the launcher-pod selector). */
  readonly kubectlOnly?: readonly string[];
  /** Arranged in both simulators after the scenario settled, before draining. */
  readonly arrange?: (sim: Simulator) => Promise<void> | void;
  readonly allowDelete?: boolean;
  readonly speed?: number;
  /** kubectl's --timeout (default 4s; kubectl retries a 429 only after 5 s). */
  readonly kubectlTimeout?: string;
}

function scenarioOf(c: Case): Manifest {
  return {
    name: c.name,
    podStartupDelaySeconds: 1,
    jobRunSeconds: 1,
    nodes: [
      { name: NODE, staticPods: c.scenario.staticPods ?? [] },
      // Starts cordoned so that every workload lands on node-1; uncordoned before the drain.
      { name: 'node-2', unschedulable: true },
    ],
    namespaces: ['shop', 'monitoring', ...(c.scenario.namespaces ?? [])],
    workloads: c.scenario.workloads ?? [],
    pdbs: c.scenario.pdbs ?? [],
    pods: c.scenario.pods ?? [],
  };
}

function podPhase(sim: Simulator, namespace: string, name: string): string | undefined {
  return (sim.store.get({ group: '', resource: 'pods' }, namespace, name)?.status as { phase?: string } | undefined)
    ?.phase;
}

async function prepare(env: DrainSim, c: Case): Promise<void> {
  env.sim.store.mutate({ group: '', resource: 'nodes' }, { name: 'node-2' }, (copy) => {
    (copy.spec as { unschedulable?: boolean }).unschedulable = false;
    return copy;
  });
  await c.arrange?.(env.sim);
  rememberPods(env.sim);
}

/** "cannot delete X: a, b" lines, stable names, pods sorted, kubectl 1.32's doubled prefix collapsed. */
function normaliseLine(sim: Simulator, line: string): string {
  const text = stabilise(sim, line.trim()).replace(/^cannot delete cannot delete /, 'cannot delete ');
  const cut = text.lastIndexOf(': ');
  return `${text.slice(0, cut)}: ${text
    .slice(cut + 2)
    .split(', ')
    .sort()
    .join(', ')}`;
}

/**
 * The filter errors of `unable to drain node "N" due to error: E` (one, or `[a, b]`), normalised and
 * sorted (kubectl fails with the same sentence on eviction errors: those are compared above).
 */
function drainErrorLines(sim: Simulator, sentence: string): string[] {
  const match = /unable to drain node "[^"]+" due to error: (.*?)(?:, continuing command\.\.\.)?$/m.exec(sentence);
  if (!match?.[1]) return [];
  const body = match[1].startsWith('[') && match[1].endsWith(']') ? match[1].slice(1, -1) : match[1];
  return body
    .split(/, (?=cannot delete )/)
    .filter((line) => line.startsWith('cannot delete'))
    .map((line) => normaliseLine(sim, line))
    .sort();
}

function kubectlFilterErrors(sim: Simulator, stderr: string): string[] {
  const marker = 'There are pending nodes to be drained:';
  const at = stderr.indexOf(marker);
  if (at < 0) return [];
  return stderr
    .slice(at + marker.length)
    .split('\n')
    .filter((line) => line.startsWith('cannot delete'))
    .map((line) => normaliseLine(sim, line))
    .sort();
}

/** Pods kubectl reported a refused eviction for (once per pod, however often it retried), stable names. */
function kubectlEvictionRefusals(sim: Simulator, stderr: string, pattern: RegExp): string[] {
  const refused = new Set<string>();
  for (const match of stderr.matchAll(/error when evicting pods\/"([^"]+)" -n "([^"]+)"[^\n]*/g)) {
    if (pattern.test(match[0])) refused.add(`${match[2]}/${match[1]}`);
  }
  return [...refused].map((key) => stabilise(sim, key)).sort();
}

function ourFilterErrors(sim: Simulator, blockers: readonly Blocker[]): string[] {
  const groups = new Map<string, string[]>();
  for (const blocker of blockers.filter((b) => FILTER_CODES.has(b.code) && b.item)) {
    const message = blocker.reason.slice(0, blocker.reason.lastIndexOf(': '));
    groups.set(message, [...(groups.get(message) ?? []), blocker.item?.name ?? '']);
  }
  return [...groups].map(([message, pods]) => normaliseLine(sim, `${message}: ${pods.join(', ')}`)).sort();
}

function ourRefusals(sim: Simulator, blockers: readonly Blocker[], code: string): string[] {
  const refused = new Set(blockers.filter((b) => b.code === code).map((b) => b.item?.name ?? ''));
  return [...refused].map((key) => stabilise(sim, key)).sort();
}

interface Outcome {
  /** kubectl exited 0 / the pass finished (launcher pods, left to the VM branch, aside). */
  readonly finished: boolean;
  readonly evicted: string[];
  readonly filterErrors: string[];
  readonly budgetRefused: string[];
  readonly multipleRefused: string[];
  /** The errors of the drain's failure sentence (`unable to drain node …`), when a filter refused it. */
  readonly drainError: string[];
  /** drainbridge only: passes run before the outcome (a refusal: the first). */
  readonly passes?: number;
}

async function runKubectl(c: Case): Promise<Outcome> {
  const env = await startDrainSim(scenarioOf(c), { speed: c.speed ?? 200 });
  try {
    await prepare(env, c);
    const run = await kubectlDrain(env.sim, NODE, [
      ...c.flags,
      ...(c.kubectlOnly ?? []),
      `--timeout=${c.kubectlTimeout ?? '4s'}`,
    ]);
    if (process.env.DEBUG_DIFFERENTIAL) console.log(c.name, 'kubectl', run.code, run.stdout, run.stderr);
    return {
      finished: run.code === 0,
      evicted: evictedBy(env.sim, 'kubernetes-admin'),
      filterErrors: kubectlFilterErrors(env.sim, run.stderr),
      budgetRefused: kubectlEvictionRefusals(env.sim, run.stderr, /disruption budget/),
      multipleRefused: kubectlEvictionRefusals(env.sim, run.stderr, /more than one PodDisruptionBudget/),
      drainError: drainErrorLines(env.sim, run.stderr),
    };
  } finally {
    await env.stop();
  }
}

async function runDrainbridge(c: Case, options: DrainOptions): Promise<Outcome> {
  const env = await startDrainSim(scenarioOf(c), { speed: c.speed ?? 200, allowDelete: c.allowDelete });
  try {
    await prepare(env, c);
    const request = requestFor(NODE, options, `diff-${c.name}`);
    await acquireHold(env.client, NODE, request);
    const store = new EvacuationProgressStore(env.client);
    await store.ensure(request);
    const pass = createEvictionPass(env.client, store, { branch: 'pods', infraPodSelector: '', recorder: store });
    let passes = 0;
    const counted = {
      branch: pass.branch,
      run: (input: Parameters<typeof pass.run>[0]) => {
        passes++;
        return pass.run(input);
      },
    };
    const settled = await runUntilSettled(env.sim, counted, request).catch((error: unknown) => {
      if (error instanceof EvacuationFailed) return error;
      throw error;
    });
    if (settled instanceof EvacuationFailed) {
      const lines = drainErrorLines(env.sim, settled.message);
      return {
        finished: false,
        evicted: evictedBy(env.sim, SA_USER),
        filterErrors: lines,
        budgetRefused: [],
        multipleRefused: [],
        drainError: lines,
        passes,
      };
    }
    const { result } = settled;
    const onlyLaunchers = result.blockers.every((b) => b.code === 'LauncherPod');
    return {
      finished: result.done || (onlyLaunchers && result.progress.moved === result.progress.total),
      evicted: evictedBy(env.sim, SA_USER),
      filterErrors: ourFilterErrors(env.sim, result.blockers),
      budgetRefused: ourRefusals(env.sim, result.blockers, 'DisruptionBudget'),
      multipleRefused: ourRefusals(env.sim, result.blockers, 'MultiplePodDisruptionBudgets'),
      drainError: [],
      passes,
    };
  } finally {
    await env.stop();
  }
}

function flagPairs(flags: readonly string[]): [string, string | undefined][] {
  return flags.map((flag) => {
    const body = flag.replace(/^--/, '');
    const eq = body.indexOf('=');
    return eq < 0 ? [body, undefined] : [body.slice(0, eq), body.slice(eq + 1)];
  });
}

const replicated = [deployment('web', 3), statefulSet('db', 2)];

const CASES: Case[] = [
  { name: 'replicated', scenario: { workloads: replicated }, flags: [] },
  { name: 'chunked-listing', scenario: { workloads: replicated }, flags: ['--chunk-size=2'] },
  { name: 'grace-period', scenario: { workloads: replicated }, flags: ['--grace-period=0'] },
  { name: 'daemonset-refused', scenario: { workloads: [deployment('web', 2), daemonSet] }, flags: [] },
  {
    name: 'daemonset-ignored',
    scenario: { workloads: [deployment('web', 2), daemonSet] },
    flags: ['--ignore-daemonsets'],
  },
  { name: 'bare-refused', scenario: { workloads: [deployment('web', 1)], pods: [barePod('debug')] }, flags: [] },
  {
    name: 'bare-forced',
    scenario: { workloads: [deployment('web', 1)], pods: [barePod('debug')] },
    flags: ['--force'],
  },
  { name: 'emptydir-refused', scenario: { workloads: [deployment('cache', 2, { emptyDir: true })] }, flags: [] },
  {
    name: 'emptydir-allowed',
    scenario: { workloads: [deployment('cache', 2, { emptyDir: true })] },
    flags: ['--delete-emptydir-data'],
  },
  {
    name: 'all-refusals-grouped',
    scenario: {
      workloads: [deployment('cache', 1, { emptyDir: true }), daemonSet],
      pods: [barePod('debug'), barePod('shell')],
    },
    flags: [],
  },
  {
    name: 'static-pods',
    scenario: {
      workloads: [deployment('web', 2)],
      staticPods: [{ name: 'kube-proxy', namespace: 'kube-system', spec: { containers: CONTAINERS } }],
    },
    flags: [],
  },
  {
    name: 'finished-pods',
    scenario: {
      workloads: [deployment('web', 1)],
      pods: [barePod('done', { annotations: { 'sim.drainbridge.io/run-seconds': '1' } })],
    },
    flags: [],
    arrange: (sim) => waitUntil('pod done to finish', () => podPhase(sim, 'default', 'done') === 'Succeeded'),
  },
  { name: 'pod-selector', scenario: { workloads: replicated }, flags: ['--pod-selector=app=web'] },
  {
    name: 'orphaned-daemonset-pod-refused',
    scenario: {
      workloads: [deployment('web', 1)],
      pods: [
        barePod('orphan', {
          namespace: 'monitoring',
          owner: {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: 'gone',
            uid: '00000000-0000-0000-0000-00000000dead',
            controller: true,
          },
        }),
      ],
    },
    flags: ['--ignore-daemonsets'],
  },
  {
    name: 'orphaned-daemonset-pod-forced',
    scenario: {
      workloads: [deployment('web', 1)],
      pods: [
        barePod('orphan', {
          namespace: 'monitoring',
          owner: {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: 'gone',
            uid: '00000000-0000-0000-0000-00000000dead',
            controller: true,
          },
        }),
      ],
    },
    flags: ['--ignore-daemonsets', '--force'],
  },
  {
    name: 'pdb-wait',
    scenario: { workloads: [deployment('web', 2)], pdbs: [pdb('web', { app: 'web' }, 1)] },
    flags: [],
    kubectlTimeout: '20s',
  },
  {
    name: 'pdb-blocked',
    scenario: { workloads: [deployment('web', 2)], pdbs: [pdb('web', { app: 'web' }, 2)] },
    flags: [],
  },
  {
    name: 'multiple-pdbs',
    scenario: {
      workloads: [deployment('web', 1, { labels: { tier: 'front' } })],
      pdbs: [pdb('by-app', { app: 'web' }, 0), pdb('by-tier', { tier: 'front' }, 0)],
    },
    flags: [],
  },
  {
    name: 'disable-eviction',
    scenario: { workloads: [deployment('web', 2)], pdbs: [pdb('web', { app: 'web' }, 2)] },
    flags: ['--disable-eviction'],
    allowDelete: true,
  },
  {
    name: 'launcher-pods',
    scenario: {
      workloads: [deployment('web', 2)],
      pods: [barePod('virt-launcher-vm1', { labels: { 'kubevirt.io': 'virt-launcher' } })],
    },
    flags: ['--force'],
    kubectlOnly: ['--pod-selector=kubevirt.io!=virt-launcher'],
  },
  {
    name: 'terminating-namespace',
    scenario: {
      workloads: [deployment('web', 1)],
      pods: [barePod('leftover', { namespace: 'old', grace: 120 })],
      namespaces: ['old'],
    },
    flags: ['--force'],
    arrange: (sim) => {
      sim.store.delete({ group: '', resource: 'namespaces' }, { name: 'old' });
    },
  },
  {
    // Real time (speed 1): kubectl compares deletionTimestamp with its own clock.
    name: 'skip-wait-for-delete-timeout',
    speed: 1,
    scenario: {
      pods: [barePod('stuck', { finalizers: ['example.com/hold'], grace: 0 }), barePod('quick', { grace: 0 })],
    },
    flags: ['--force', '--skip-wait-for-delete-timeout=1'],
    arrange: async (sim) => {
      const pods = { group: '', resource: 'pods' };
      sim.store.delete(pods, { namespace: 'default', name: 'stuck' });
      // Until the deletion is over the 1 s timeout old by both clocks that judge it: kubectl's (real time)
      // and the simulator's. Ages only grow, so both drains see it as past the timeout.
      const stamp = sim.store.get(pods, 'default', 'stuck')?.metadata.deletionTimestamp;
      assert.ok(stamp, 'stuck is terminating (its finalizer holds it)');
      const deleted = Date.parse(stamp);
      await waitUntil(
        'the deletion of stuck older than 1 s',
        () => Math.min(Date.now(), sim.clock.now()) - deleted > 1_000,
        10_000,
        { everyMs: 50 },
      );
    },
  },
];

describe('differential: kubectl drain vs drainbridge passes', { concurrency: 4 }, () => {
  const available = kubectlAvailable();
  for (const c of CASES) {
    test(c.name, { skip: available ? false : '/usr/bin/kubectl is not installed' }, async () => {
      const options = drainOptionsFromFlags(flagPairs(c.flags));
      const [kubectl, ours] = await Promise.all([runKubectl(c), runDrainbridge(c, options)]);
      if (process.env.DEBUG_DIFFERENTIAL) console.log(c.name, JSON.stringify({ kubectl, ours }));
      assert.equal(ours.finished, kubectl.finished, 'finished (kubectl exit 0)');
      assert.deepEqual(ours.evicted, kubectl.evicted, 'evicted pods');
      assert.deepEqual(ours.filterErrors, kubectl.filterErrors, 'filter refusals');
      assert.deepEqual(ours.multipleRefused, kubectl.multipleRefused, 'multiple-PDB refusals');
      assert.deepEqual(ours.drainError, kubectl.drainError, 'the drain fails with the same errors');
      // kubectl fails a refused drain before it evicts anything: so does drainbridge's first pass.
      if (kubectl.drainError.length > 0) assert.equal(ours.passes, 1, 'a filter refusal fails the first pass');
      if (c.name !== 'pdb-wait') assert.deepEqual(ours.budgetRefused, kubectl.budgetRefused, 'PDB refusals');
    });
  }
});
