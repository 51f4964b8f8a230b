/**
 * One safety decision, everywhere (issue 25): every blocker `drainbridge plan` reports stops a real
 * evacuation too, with the same code and the same words. Each case plans the node (as `drainbridge plan`
 * does: lib/branches/plan.ts) and then evacuates it (the packaged Evacuate machine, embedded,
 * against the simulator, as drainbridge's ServiceAccount); the evacuation ends failed and its Evacuation
 * Failed names the blocker as the plan did. ControlPlaneQuorum refuses before the cordon: the node is
 * left as it was. Every code of lib/model/plan.ts is either walked here or listed with the reason it is
 * not (a new code fails the last test until it is one or the other).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BranchDefinition } from '../../lib/branches/contract/branch.ts';
import { planEvacuation } from '../../lib/branches/plan.ts';
import { registerBranch } from '../../lib/branches/registry.ts';
import { EvacuationFailed } from '../../lib/errors/index.ts';
import { BLOCKER_CODES, type Blocker, type BlockerCode, isBlocked } from '../../lib/model/plan.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../lib/model/request.ts';
import { readLedger } from '../../lib/node/ledger.ts';
import { POWER_OFF, powerOffBranch } from './fixtures/power-off-branch.ts';
import {
  eventsOf,
  failureOf,
  maintenanceRequested,
  readNodeAsAdmin,
  simInstant,
  startWorkflowSim,
  writesSince,
} from './harness.ts';
import { kubeVirtScenario } from './kubevirt-scenario.ts';
import { WORKFLOW_SCENARIO } from './scenario.ts';

const CONTAINERS = [{ name: 'app', image: 'busybox:1.37' }];
type Manifest = Record<string, unknown>;

function deployment(name: string, extra: { emptyDir?: boolean; labels?: Record<string, string> } = {}): Manifest {
  const labels = { app: name, ...extra.labels };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels },
        spec: { containers: CONTAINERS, volumes: extra.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [] },
      },
    },
  };
}

function pdb(name: string, matchLabels: Record<string, string>, minAvailable: number): Manifest {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'shop' },
    spec: { minAvailable, selector: { matchLabels } },
  };
}

function pod(name: string, extra: { labels?: Record<string, string>; owner?: Manifest } = {}): Manifest {
  const metadata: Manifest = { name, namespace: 'shop', labels: extra.labels ?? {} };
  if (extra.owner) metadata.ownerReferences = [extra.owner];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { nodeName: 'node-1', containers: CONTAINERS } };
}

const ETCD = {
  name: 'etcd',
  namespace: 'kube-system',
  labels: { component: 'etcd' },
  spec: { containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.16-0' }] },
};

interface Case {
  readonly code: BlockerCode;
  readonly parts: { workloads?: Manifest[]; pdbs?: Manifest[]; pods?: Manifest[] };
  /** node-1 is a control-plane node with kubeadm's etcd static pod (the only member). */
  readonly controlPlane?: boolean;
  readonly drain?: Record<string, unknown>;
  /** A whole scenario instead of `parts` on the two plain nodes (the VM branches need KubeVirt's). */
  readonly scenario?: Record<string, unknown>;
}

const CASES: readonly Case[] = [
  { code: 'ControlPlaneQuorum', parts: { workloads: [deployment('web')] }, controlPlane: true },
  { code: 'BarePod', parts: { pods: [pod('debug')] } },
  {
    code: 'DaemonSetPod',
    parts: {
      workloads: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: 'agent', namespace: 'shop' },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: { metadata: { labels: { app: 'agent' } }, spec: { containers: CONTAINERS } },
          },
        },
      ],
    },
    drain: { ignoreDaemonSets: false },
  },
  {
    code: 'OrphanedDaemonSetPod',
    parts: {
      pods: [
        pod('agent-orphan', {
          owner: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'gone', uid: 'uid-gone', controller: true },
        }),
      ],
    },
  },
  { code: 'EmptyDirData', parts: { workloads: [deployment('cache', { emptyDir: true })] } },
  { code: 'DisruptionBudget', parts: { workloads: [deployment('db')], pdbs: [pdb('db', { app: 'db' }, 1)] } },
  {
    code: 'MultiplePodDisruptionBudgets',
    parts: {
      workloads: [deployment('web', { labels: { tier: 'front' } })],
      pdbs: [pdb('web', { app: 'web' }, 0), pdb('front', { tier: 'front' }, 0)],
    },
  },
  {
    code: 'LauncherPod',
    parts: { pods: [pod('virt-launcher-vm1-x7k2p', { labels: { 'kubevirt.io': 'virt-launcher' } })] },
  },
  {
    // A VMI that must not be shut down and cannot be moved: the evacuation holds the node and gives up at
    // its deadline naming it, as the plan does.
    code: 'NotLiveMigratable',
    parts: {},
    scenario: {
      ...kubeVirtScenario({
        vms: [
          { name: 'legacy', strategy: 'None' },
          { name: 'db', strategy: 'LiveMigrate', notMigratable: 'DisksNotLiveMigratable' },
        ],
      }),
      speed: 200,
    },
  },
];

/**
 * Codes plan reports as a warning (exit 0), never a blocker, because an evacuation goes ahead: walked by
 * the test below (plan warns in the code's words; the evacuation succeeds).
 */
const WARNED: readonly BlockerCode[] = ['Unschedulable'];

/** Codes no case here walks, and why: each is reported by plan and evacuation from one function, or by one of them only. */
const NOT_WALKED: Readonly<Partial<Record<BlockerCode, string>>> = {
  MigrationFailed: 'reported only once a migration ran (an evacuation, never a plan)',
  NoValidHost: "Nova's scheduler answer to a live migration (an evacuation, never a plan)",
  InsufficientCapacity:
    "Nova's: plan's blockers refuse the Nova prepare (lib/branches/nova/plan.ts refusalOf; test/unit/nova/plan-agrees.test.ts), which reaches Evacuation Failed as the refusing branch below",
  NoComputeService:
    "Nova's: plan's blockers refuse the Nova prepare (lib/branches/nova/plan.ts refusalOf; test/unit/nova/plan-agrees.test.ts), which reaches Evacuation Failed as the refusing branch below",
  OutOfBandUncordon:
    'someone uncordoned a node drainbridge holds: only an evacuation holds a node (it pauses the drain: test/faults/uncordon-mid-drain.test.ts)',
  Other: 'a catch-all (a refused eviction, a pod stuck terminating): no one cause to walk',
};

function scenarioOf(c: Case): Record<string, unknown> {
  if (c.scenario) return { ...c.scenario, name: `safety-${c.code.toLowerCase()}` };
  return {
    name: `safety-${c.code.toLowerCase()}`,
    speed: 200,
    podStartupDelaySeconds: 1,
    nodes: [
      {
        name: 'node-1',
        ...(c.controlPlane ? { labels: { 'node-role.kubernetes.io/control-plane': '' }, staticPods: [ETCD] } : {}),
      },
      // Cordoned while the scenario settles, so that everything lands on node-1; opened before the plan.
      { name: 'node-2', unschedulable: true },
    ],
    namespaces: ['shop'],
    workloads: c.parts.workloads ?? [],
    pdbs: c.parts.pdbs ?? [],
    pods: c.parts.pods ?? [],
  };
}

/** What a blocker is compared by: its code and its words. */
const words = (blockers: readonly Pick<Blocker, 'code' | 'reason'>[], code: BlockerCode) =>
  blockers
    .filter((b) => b.code === code)
    .map((b) => `[${b.code}] ${b.reason}`)
    .sort();

describe('every blocker plan reports stops an evacuation, in the same words', { concurrency: 2 }, () => {
  for (const c of CASES) {
    it(c.code, async () => {
      const w = await startWorkflowSim(scenarioOf(c));
      try {
        await w.admin.patchNode('node-2', { spec: { unschedulable: false } });
        const drain = { ignoreDaemonSets: true, ...c.drain };
        const { deps } = w.runtime;
        const planned = await planEvacuation(deps.config, deps.kube, 'node-1', {
          options: { ...KUBECTL_DRAIN_DEFAULTS, ...drain },
          infraPodSelector: deps.config.infraPodSelector,
        });
        const plan = words(
          planned.plan.branches.flatMap((b) => b.blockers),
          c.code,
        );
        assert.ok(plan.length > 0, `plan reports ${c.code}`);

        const mark = w.sim.requestLog.mark();
        // The request's deadline ends every branch (the drain's --timeout only the pod branches).
        const deadline = simInstant(w, 600);
        await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain, deadline }));
        const [execution] = w.runtime.executionsFor('req-node-1');
        assert.ok(execution);
        const outcome = await execution.outcome;
        assert.equal(failureOf(outcome).name, 'EvacuationFailed', 'the evacuation ends failed');
        const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as {
          error: { name: string; message: string };
          blockers: Blocker[];
        }[];
        assert.ok(failed, 'Evacuation Failed is published');
        assert.deepEqual(words(failed.blockers, c.code), plan, 'the same code and words as the plan');

        if (c.code === 'ControlPlaneQuorum') {
          assert.equal(failed.error.name, 'EvacuationRefused');
          assert.ok(
            failed.error.message.includes(plan[0] ?? '?'),
            `the refusal names the blocker: ${failed.error.message}`,
          );
          const node = await readNodeAsAdmin(w, 'node-1');
          assert.notEqual(node.spec?.unschedulable, true, 'the node is not cordoned');
          assert.deepEqual(readLedger(node).holds, {}, 'no hold is taken');
          const touched = writesSince(w, mark).filter(
            (write) => write.resource === 'nodes' || write.resource === 'pods',
          );
          assert.deepEqual(touched, [], 'nothing was written to the node or its pods');
        }
      } finally {
        await w.stop();
      }
    });
  }

  it('Unschedulable: plan warns in its words and exits 0 (not blocked); the evacuation goes ahead as kubectl', async () => {
    // node-2 stays cordoned: the web pod's replacement fits nowhere else.
    const c: Case = { code: 'Unschedulable', parts: { workloads: [deployment('web')] } };
    const w = await startWorkflowSim(scenarioOf(c));
    try {
      const drain = { ignoreDaemonSets: true };
      const { deps } = w.runtime;
      const planned = await planEvacuation(deps.config, deps.kube, 'node-1', {
        options: { ...KUBECTL_DRAIN_DEFAULTS, ...drain },
        infraPodSelector: deps.config.infraPodSelector,
      });
      assert.equal(isBlocked(planned.plan), false, 'plan is not blocked: `drainbridge plan` exits 0');
      assert.ok(
        planned.warnings.some((line) =>
          /^\[Unschedulable\] replacement of pod shop\/web-\S+ cannot schedule anywhere else: /.test(line),
        ),
        `plan warns: ${planned.warnings.join(' | ')}`,
      );
      const deadline = simInstant(w, 600);
      await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { drain, deadline }));
      const [execution] = w.runtime.executionsFor('req-node-1');
      assert.ok(execution);
      assert.equal(failureOf(await execution.outcome).name, '(succeeded)', 'the evacuation succeeds');
    } finally {
      await w.stop();
    }
  });

  it('every blocker code is walked above or listed with the reason it is not', () => {
    const walked = new Set([...CASES.map((c) => c.code), ...WARNED]);
    for (const code of BLOCKER_CODES) {
      assert.ok(walked.has(code) !== (NOT_WALKED[code] !== undefined), `${code}: walked or listed, exactly one`);
    }
  });
});

describe("a branch whose prepare refuses with its plan's blockers (as Nova's does on InsufficientCapacity)", () => {
  const blocker: Blocker = {
    code: 'InsufficientCapacity',
    reason: 'no other nova-compute host is enabled and up to take the servers',
  };
  /** What a refusing prepare throws: an EvacuationFailed carrying the branch's blockers (lib/model/pass.ts). */
  class Refused extends EvacuationFailed {
    readonly passFailure = { progress: { total: 0, moved: 0, inFlight: 0, skipped: 0 }, blockers: [blocker] };
  }
  const refusing: BranchDefinition = {
    ...powerOffBranch().definition,
    prepare: async () => {
      throw new Refused(`refused: [${blocker.code}] ${blocker.reason}`);
    },
    planner: async () => async () => ({ branch: POWER_OFF, toMove: [], skipped: [], blockers: [blocker] }),
  };

  it('Evacuation Failed names the blockers the plan reports, with their code', async () => {
    const unregister = registerBranch(refusing);
    const w = await startWorkflowSim(WORKFLOW_SCENARIO);
    try {
      const { deps } = w.runtime;
      const planned = await planEvacuation(deps.config, deps.kube, 'node-1', {
        options: KUBECTL_DRAIN_DEFAULTS,
        infraPodSelector: deps.config.infraPodSelector,
      });
      const plan = words(
        planned.plan.branches.flatMap((b) => b.blockers),
        'InsufficientCapacity',
      );
      assert.equal(plan.length, 1);
      await w.runtime.put('Maintenance Requested', maintenanceRequested('node-1', { deadline: simInstant(w, 600) }));
      const [execution] = w.runtime.executionsFor('req-node-1');
      assert.ok(execution);
      assert.equal(failureOf(await execution.outcome).name, 'EvacuationFailed');
      const [failed] = eventsOf(w, 'Evacuation Failed', 'req-node-1') as { blockers: Blocker[] }[];
      assert.deepEqual(words(failed?.blockers ?? [], 'InsufficientCapacity'), plan);
    } finally {
      await w.stop();
      unregister();
    }
  });
});
