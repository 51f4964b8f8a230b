/**
 * The events of the soak's schedule, each a small function over the world that says whether it acted
 * (an event with nothing to act on — no held node to uncordon — is skipped, not counted). People act
 * through the real kubectl as the cluster admin; CLI users run the real `drainbridge` commands; faults
 * come from the simulator (sim.faults), the proxy in front of it, or writes to its store.
 */
import { join } from 'node:path';
import { bootIdOf } from '../sim/scenarios/load.ts';
import type { KubeObject } from '../sim/store/types.ts';
import { RUN_USER } from '../test/forwarder/harness.ts';
import { ledgerHolds } from '../test/support/invariants.ts';
import { DRAINBRIDGE_SA } from '../test/support/request-log.ts';
import { announceNotice, rescheduleNotice, withdrawNotice } from './clouds.ts';
import { Child } from './processes.ts';
import type { CliRun, SoakWorld } from './world.ts';

const NODES = { group: '', resource: 'nodes' };
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };
const LEDGER = 'drainbridge.io/ledger';
const DRAINBRIDGE_USERS = [RUN_USER, DRAINBRIDGE_SA];

export type Action = (w: SoakWorld) => Promise<boolean>;

const unschedulable = (node: KubeObject): boolean =>
  (node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true;

function nodes(w: SoakWorld): KubeObject[] {
  return w.sim.store.list(NODES).items;
}

const nameOf = (object: KubeObject): string => object.metadata.name ?? '';

async function kubectl(w: SoakWorld, args: string[]): Promise<boolean> {
  return (await w.kubectl.run(args, { timeoutMs: 30_000 })).code === 0;
}

// ---- people -------------------------------------------------------------------------------------------

const personCordons: Action = async (w) => {
  const free = nodes(w).filter((n) => !unschedulable(n) && !w.people.cordoned.has(nameOf(n)));
  if (free.length === 0) return false;
  const node = nameOf(w.random.pick(free));
  if (!(await kubectl(w, ['cordon', node]))) return false;
  w.people.cordoned.add(node);
  return true;
};

const personUncordons: Action = async (w) => {
  if (w.people.cordoned.size === 0) return false;
  const node = w.random.pick([...w.people.cordoned]);
  // Dropped before the uncordon lands: from here on an uncordon of this node is the person's.
  w.people.cordoned.delete(node);
  return kubectl(w, ['uncordon', node]);
};

/** A person uncordons a node drainbridge holds (and cordoned), mid-maintenance. */
const personUncordonsHeld: Action = async (w) => {
  const held = nodes(w).filter(
    (n) => ledgerHolds(n) === 'held' && unschedulable(n) && !w.people.cordoned.has(nameOf(n)),
  );
  if (held.length === 0) return false;
  return kubectl(w, ['uncordon', nameOf(w.random.pick(held))]);
};

/** A person cordons again a held node that someone uncordoned: the cordon is now theirs. */
const personRecordonsHeld: Action = async (w) => {
  const held = nodes(w).filter((n) => ledgerHolds(n) === 'held' && !unschedulable(n));
  if (held.length === 0) return false;
  const node = nameOf(w.random.pick(held));
  if (!(await kubectl(w, ['cordon', node]))) return false;
  w.people.cordoned.add(node);
  return true;
};

// ---- NodeMaintenance ------------------------------------------------------------------------------------

const nodeMaintenanceCreated: Action = async (w) => {
  const taken = new Set(w.nodeMaintenances.values());
  const free = w.nodes.filter((n) => !taken.has(n));
  if (free.length === 0) return false;
  const node = w.random.pick(free);
  const name = `soak-${++w.serial}-${node}`;
  const manifest = `apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata:\n  name: ${name}\nspec:\n  nodeName: ${node}\n  reason: soak\n`;
  if ((await w.kubectl.run(['apply', '-f', '-'], { input: manifest, timeoutMs: 30_000 })).code !== 0) return false;
  w.nodeMaintenances.set(name, node);
  return true;
};

const nodeMaintenanceDeleted: Action = async (w) => {
  if (w.nodeMaintenances.size === 0) return false;
  const name = w.random.pick([...w.nodeMaintenances.keys()]);
  w.nodeMaintenances.delete(name);
  return kubectl(w, ['delete', 'nodemaintenance', name, '--wait=false']);
};

// ---- CLI users ------------------------------------------------------------------------------------------

function runCli(w: SoakWorld, request: Pick<CliRun, 'command' | 'node' | 'requestId'>, extra: string[] = []): CliRun {
  const { command, node, requestId } = request;
  const args = [command, node, '--request-id', requestId, '--kubeconfig', w.cliKubeconfig, ...extra];
  const child = new Child(args, w.env, join(w.dir, 'cli.log'));
  const run: CliRun = { command, node, requestId, child };
  void child.exited.then((exit) => {
    run.exit = exit;
  });
  w.cli.push(run);
  return run;
}

const runningCli = (w: SoakWorld): CliRun[] => w.cli.filter((c) => !c.exit);

const cliEvacuates: Action = async (w) => {
  if (runningCli(w).length >= 3) return false;
  const node = w.random.pick(w.nodes);
  runCli(w, { command: 'evacuate', node, requestId: `soak-${++w.serial}` }, [
    '--ignore-daemonsets',
    '--timeout=120s',
    '-o',
    'plain',
  ]);
  return true;
};

/** Ctrl-C of a running `drainbridge evacuate`. */
const cliInterrupted: Action = async (w) => {
  const running = runningCli(w).filter((c) => c.command === 'evacuate' && !c.interrupted);
  if (running.length === 0) return false;
  const run = w.random.pick(running);
  run.interrupted = true;
  run.child.signal('SIGINT');
  return true;
};

/** A request of a CLI user's `evacuate` (ended or interrupted) that still holds its node. */
function heldCliRequest(w: SoakWorld): CliRun | undefined {
  const held = new Set(
    nodes(w).flatMap((n) => {
      const text = n.metadata.annotations?.[LEDGER];
      if (!text || ledgerHolds(n) !== 'held') return [];
      return Object.keys((JSON.parse(text) as { holds: Record<string, unknown> }).holds);
    }),
  );
  const candidates = w.cli.filter((c) => c.command === 'evacuate' && held.has(c.requestId));
  return candidates.length > 0 ? w.random.pick(candidates) : undefined;
}

const cliRestores: Action = async (w) => {
  const request = heldCliRequest(w);
  if (!request || runningCli(w).length >= 4) return false;
  runCli(w, { ...request, command: 'restore' }, ['-o', 'plain']);
  return true;
};

const cliAborts: Action = async (w) => {
  const request = heldCliRequest(w);
  if (!request || runningCli(w).length >= 4) return false;
  runCli(w, { ...request, command: 'abort' });
  return true;
};

// ---- replicas ---------------------------------------------------------------------------------------------

function killReplica(signal: NodeJS.Signals): Action {
  return async (w) => {
    const running = w.replicas.filter((r) => r.current);
    if (running.length === 0) return false;
    const replica = w.random.pick(running);
    await replica.stop(signal);
    const downMs = w.random.int(2_000, 20_000);
    setTimeout(() => replica.start(), downMs).unref();
    return true;
  };
}

// ---- API server faults ------------------------------------------------------------------------------------

function burst(code: number): Action {
  return async (w) => {
    const user = w.random.pick(DRAINBRIDGE_USERS);
    const heal = w.sim.faults.failRequests({ user }, code, `soak: injected ${code}`, w.random.int(5, 40));
    w.heal.add(heal);
    setTimeout(() => {
      heal();
      w.heal.delete(heal);
    }, 20_000).unref();
    return true;
  };
}

const slowResponses: Action = async (w) => {
  const heal = w.sim.faults.holdRequests({ user: w.random.pick(DRAINBRIDGE_USERS) });
  w.heal.add(heal);
  setTimeout(
    () => {
      heal();
      w.heal.delete(heal);
    },
    w.random.int(1_000, 8_000),
  ).unref();
  return true;
};

const watchesDropped: Action = async (w) => w.sim.faults.dropWatches({}) >= 0;

const watchesExpired: Action = async (w) => {
  w.sim.faults.expireWatches({}, w.random.int(1, 4));
  return true;
};

function outage(seconds: () => number): Action {
  return async (w) => {
    if (w.busy) return false;
    w.busy = w.proxy.outage(seconds() * 1000).finally(() => {
      w.busy = undefined;
    });
    return true;
  };
}

// ---- conflicting writes ------------------------------------------------------------------------------------

/** Another writer rewrites a held node's ledger as it is (a new resourceVersion under drainbridge's feet). */
const ledgerConflict: Action = async (w) => {
  const held = nodes(w).filter((n) => ledgerHolds(n) === 'held');
  if (held.length === 0) return false;
  const node = nameOf(w.random.pick(held));
  w.sim.store.mutate(NODES, { name: node }, (copy) => {
    copy.metadata.annotations = { ...copy.metadata.annotations, 'soak.drainbridge.io/touched': String(++w.serial) };
  });
  return true;
};

/** Another writer touches the replicas' Lease (its resourceVersion changes under the leader's renewal). */
const leaseConflict: Action = async (w) => {
  const leases = w.sim.store.list(LEASES, { namespace: 'drainbridge' }).items;
  if (leases.length === 0) return false;
  const lease = w.random.pick(leases);
  w.sim.store.mutate(LEASES, { namespace: 'drainbridge', name: nameOf(lease) }, (copy) => {
    copy.metadata.annotations = { ...copy.metadata.annotations, 'soak.drainbridge.io/touched': String(++w.serial) };
  });
  return true;
};

// ---- maintenance windows ------------------------------------------------------------------------------------

const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };

/** A node a window's request drained reboots (new boot ID, still Ready): its maintenance ends on that. */
const windowNodeReboots: Action = async (w) => {
  const drained = w.sim.store
    .list(EVACUATIONS)
    .items.filter(
      (e) =>
        (e.spec as { origin?: string }).origin === 'schedule' &&
        (e.status as { phase?: string } | undefined)?.phase === 'NodeDrained',
    )
    .map((e) => (e.spec as { nodeName: string }).nodeName);
  if (drained.length === 0) return false;
  const node = w.random.pick(drained);
  w.sim.store.mutate(NODES, { name: node }, (copy) => {
    const status = copy.status as { nodeInfo?: { bootID?: string } };
    status.nodeInfo = { ...status.nodeInfo, bootID: bootIdOf(node, ++w.serial) };
  });
  return true;
};

// ---- cloud notices --------------------------------------------------------------------------------------------

/** An action whose kind says what it did (the cloud and which way a notice moved); undefined: nothing to act on. */
type NamedAction = (w: SoakWorld) => Promise<string | undefined>;

const noticeAnnounced: NamedAction = async (w) => announceNotice(w.clouds, w.notices, w.random, ++w.serial);
const noticeRescheduled: NamedAction = async (w) => rescheduleNotice(w.clouds, w.random);
const noticeWithdrawn: NamedAction = async (w) => withdrawNotice(w.clouds, w.random);

/** A node agent SIGKILLed (its DaemonSet pod dies): a new one starts a few seconds later and reads again. */
const agentKilled: NamedAction = async (w) => {
  const running = w.clouds.filter((c) => c.agent.current);
  if (running.length === 0) return undefined;
  const cloud = w.random.pick(running);
  await cloud.agent.stop('SIGKILL');
  setTimeout(() => cloud.agent.start(), w.random.int(2_000, 10_000)).unref();
  return `node agent SIGKILL (${cloud.provider})`;
};

/** IMDS restarts: every session token issued is invalid, the agent's next read is refused (401) until it takes a new one. */
const imdsTokensRevoked: NamedAction = async (w) => {
  for (const cloud of w.clouds) if (cloud.provider === 'aws') cloud.fake.revokeTokens();
  return 'metadata server restart (IMDSv2 tokens revoked)';
};

/** The notice events, counted under the kind each returns. */
export const NAMED_ACTIONS: readonly { readonly weight: number; readonly act: NamedAction }[] = [
  { weight: 4, act: noticeAnnounced },
  { weight: 2, act: noticeRescheduled },
  { weight: 1.5, act: noticeWithdrawn },
  { weight: 0.5, act: agentKilled },
  { weight: 0.5, act: imdsTokensRevoked },
];

/** The schedule's events by kind, with their weights. */
export const ACTIONS: readonly { readonly kind: string; readonly weight: number; readonly act: Action }[] = [
  { kind: 'person cordons', weight: 6, act: personCordons },
  { kind: 'person uncordons', weight: 6, act: personUncordons },
  { kind: 'person uncordons a held node', weight: 2, act: personUncordonsHeld },
  { kind: 'person re-cordons a held node', weight: 2, act: personRecordonsHeld },
  { kind: 'NodeMaintenance created', weight: 4, act: nodeMaintenanceCreated },
  { kind: 'NodeMaintenance deleted', weight: 4, act: nodeMaintenanceDeleted },
  { kind: 'window node reboots', weight: 3, act: windowNodeReboots },
  { kind: 'CLI evacuate', weight: 5, act: cliEvacuates },
  { kind: 'CLI Ctrl-C', weight: 2, act: cliInterrupted },
  { kind: 'CLI restore', weight: 5, act: cliRestores },
  { kind: 'CLI abort', weight: 2, act: cliAborts },
  { kind: 'replica SIGKILL', weight: 1, act: killReplica('SIGKILL') },
  { kind: 'replica SIGTERM', weight: 1, act: killReplica('SIGTERM') },
  { kind: 'API 5xx burst', weight: 4, act: burst(500) },
  { kind: 'API 429 burst', weight: 4, act: burst(429) },
  { kind: 'API slow responses', weight: 3, act: slowResponses },
  { kind: 'watches dropped', weight: 3, act: watchesDropped },
  { kind: 'watches expired (410)', weight: 2, act: watchesExpired },
  { kind: 'API outage 30 s', weight: 0.3, act: outage(() => 30) },
  { kind: 'API restart keeping the store', weight: 1, act: outage(() => 2) },
  { kind: 'conflicting ledger write', weight: 3, act: ledgerConflict },
  { kind: 'conflicting Lease write', weight: 2, act: leaseConflict },
];
