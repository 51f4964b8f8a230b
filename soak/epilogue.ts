/**
 * The end of the soak: faults healed, both replicas up, the maintenance window ended, every person's
 * cordon lifted, every NodeMaintenance deleted, every CLI user's request restored — then time for
 * drainbridge to finish. The checker then expects every node back to schedulable and no hold left (or
 * names what is left).
 */

import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../sim/store/types.ts';
import { ledgerHolds } from '../test/support/invariants.ts';
import { withdrawAll } from './clouds.ts';
import { WINDOW_LABEL } from './cluster.ts';
import { Child } from './processes.ts';
import type { SoakWorld } from './world.ts';

const NODES = { group: '', resource: 'nodes' };
const EVACUATIONS = { group: 'drainbridge.io', resource: 'evacuations' };
const ENDED_PHASES = new Set(['Failed', 'NodeDrained', 'MaintenanceStarted', 'NodeRunning']);
const LEDGER = 'drainbridge.io/ledger';

function holds(node: KubeObject): string[] {
  const text = node.metadata.annotations?.[LEDGER];
  if (!text || ledgerHolds(node) !== 'held') return [];
  return Object.keys((JSON.parse(text) as { holds: Record<string, unknown> }).holds);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(1_000);
  }
  return true;
}

/** Restores every hold left, one CLI `restore` per request, and waits for them. */
async function restoreAll(w: SoakWorld): Promise<void> {
  const runs: Promise<unknown>[] = [];
  for (const node of w.sim.store.list(NODES).items) {
    // A cloud notice's hold is its agent's to release (the notice was withdrawn above): the checker judges that.
    for (const requestId of holds(node).filter((id) => !/^(aws|azure|gcp):/.test(id))) {
      const args = [
        'restore',
        node.metadata.name ?? '',
        '--request-id',
        requestId,
        '--kubeconfig',
        w.cliKubeconfig,
        '-o',
        'plain',
      ];
      runs.push(new Child(args, w.env, join(w.dir, 'epilogue.log')).exited);
    }
  }
  await Promise.all(runs);
}

/**
 * Ends the soak's maintenance window as an operator ends one without a redeploy: its nodes leave its
 * selector. The window's rule fires every 3 minutes whether the schedule is over or not; an occurrence
 * opening during the epilogue would start new maintenance after the chaos ended — requests the epilogue
 * cannot see to their end (an admitted one waits for a reboot the schedule no longer does). Exempting
 * such requests from `requests-end` instead would blind the checker to requests that truly never end.
 * Requests of an occurrence already open go on: they end when it closes (2 minutes) or are restored below.
 */
async function endWindow(w: SoakWorld): Promise<void> {
  const result = await w.kubectl.run(['label', 'nodes', '-l', WINDOW_LABEL, `${WINDOW_LABEL}-`], { timeoutMs: 30_000 });
  const said = result.code === 0 ? 'its nodes left its selector' : `kubectl exit ${result.code}`;
  appendFileSync(
    join(w.dir, 'events.log'),
    `${new Date().toISOString()} epilogue: maintenance window ended (${said})\n`,
  );
}

export async function epilogue(w: SoakWorld): Promise<void> {
  for (const heal of w.heal) heal();
  await w.busy;
  for (const replica of w.replicas) replica.start();
  for (const cloud of w.clouds) cloud.agent.start();
  await endWindow(w);
  // The providers withdraw what still stands: the agents end those requests (their restores run below).
  withdrawAll(w.clouds);
  for (const node of [...w.people.cordoned]) {
    w.people.cordoned.delete(node);
    await w.kubectl.run(['uncordon', node], { timeoutMs: 30_000 });
  }
  // The operator enables again the nova-compute services they disabled, as the people lift their cordons.
  await w.nova?.endOperatorDisables().catch((error: Error) => {
    appendFileSync(
      join(w.dir, 'events.log'),
      `${new Date().toISOString()} epilogue: operator's enable failed: ${error.message}\n`,
    );
  });
  for (const name of [...w.nodeMaintenances.keys()]) {
    w.nodeMaintenances.delete(name);
    await w.kubectl.run(['delete', 'nodemaintenance', name, '--wait=false'], { timeoutMs: 30_000 });
  }
  // One Ctrl-C each: a second one (to a command already stopping, e.g. after the schedule's Ctrl-C) leaves at
  // once, cutting short the withdrawal that ends a waiting request's record.
  for (const run of w.cli) {
    if (run.exit || run.interrupted) continue;
    run.interrupted = true;
    run.child.signal('SIGINT');
  }
  await waitFor(() => w.cli.every((c) => c.exit), 60_000);
  // drainbridge run restores what the people's uncordons and the NodeMaintenances' deletions ended.
  await waitFor(() => w.sim.store.list(NODES).items.every((n) => holds(n).length === 0), 60_000);
  await restoreAll(w);
  await waitFor(() => w.sim.store.list(NODES).items.every((n) => holds(n).length === 0), 120_000);
  // Requests still in line end on their own once drainbridge next looks (a window closes within its 2
  // minutes, a lifted cordon is read within 120 s in line): the checker judges them after that, not before.
  await waitFor(() => w.sim.store.list(EVACUATIONS).items.every((r) => recordEnded(r.status)), 150_000);
}

/** Whether a record shows an end the checker knows (soak/observe.ts); waiting only, never judging. */
function recordEnded(status: unknown): boolean {
  const s = (status ?? {}) as { phase?: string; endedAt?: string; restore?: { finishedAt?: string } };
  return Boolean(s.restore?.finishedAt || s.endedAt || ENDED_PHASES.has(s.phase ?? ''));
}
