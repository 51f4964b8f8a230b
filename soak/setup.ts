/**
 * The soak's world: the simulated cluster with drainbridge's deploy/ applied, the outage proxy in front of
 * it, kubeconfig files for drainbridge's accounts (through the proxy) and the two `drainbridge run`
 * replicas (leader election over the Lease; the standby takes over when the leader dies).
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../sim/index.ts';
import { renderKubeconfig } from '../sim/kubeconfig.ts';
import { whenSettled } from '../sim/scenarios/index.ts';
import { findKubectl, Kubectl } from '../test/fidelity/kubectl-runner.ts';
import { CLUSTER_MANIFESTS } from '../test/forwarder/harness.ts';
import { makeTestCertificate } from '../test/support/tls-cert.ts';
import { type BusFront, freePort, startBusFront } from './bus-front.ts';
import { startClouds } from './clouds.ts';
import { soakNodeName, soakScenario, WINDOW_LABEL } from './cluster.ts';
import type { NovaSoak } from './nova.ts';
import { drainbridgeNovaEnv } from './nova-lab.ts';
import type { People } from './observe.ts';
import type { SoakOptions } from './options.ts';
import { Replica } from './processes.ts';
import { startOutageProxy } from './proxy.ts';
import { seededRandom } from './random.ts';
import type { SoakWorld } from './world.ts';

const ROOT = new URL('../', import.meta.url).pathname;
/** Simulated seconds per real second: pods start in a tenth of a second, migrations in about one. */
const SPEED = 10;

/** The drainbridge settings of every process (replicas and CLI users alike). */
export function soakEnv(options: SoakOptions): Record<string, string> {
  return {
    DRAINBRIDGE_MAX_HELD_NODES: String(options.maxHeld),
    // A drain that cannot finish (the ledger PDB at its limit, bare pods) ends in 2 minutes, naming its blocker.
    DRAINBRIDGE_DRAIN_TIMEOUT: '120',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    // A window opening every 3 minutes for 2, one node at a time, each maintenance ended by the node's
    // reboot (the schedule's "window node reboots" event).
    DRAINBRIDGE_MAINTENANCE_WINDOWS: JSON.stringify([
      {
        name: 'soak',
        schedule: 'cron(0/3 * * * ? *)',
        timezone: 'UTC',
        durationMinutes: 2,
        nodeSelector: `${WINDOW_LABEL}=nightly`,
        maxNodes: 1,
        endsOn: 'reboot',
      },
    ]),
  };
}

/** Starts the world; `nova`: the Nova lab (`--nova`, opened and its servers booted by the caller). */
export async function startWorld(options: SoakOptions, nova?: NovaSoak): Promise<SoakWorld> {
  const scenario = soakScenario(options.nodes, SPEED, nova !== undefined);
  const sim = await startSimulator({ scenario, historySize: 50_000 });
  for (const file of CLUSTER_MANIFESTS) sim.apply(readFileSync(join(ROOT, file), 'utf8'), file);
  if (sim.scenario) await whenSettled(sim.store, sim.scenario, 120_000);
  const binary = findKubectl();
  if (!binary) throw new Error('the soak needs the real kubectl on PATH (the people act through it)');
  const dir = options.out ?? mkdtempSync(join(tmpdir(), 'drainbridge-soak-'));
  mkdirSync(dir, { recursive: true });
  const proxy = await startOutageProxy(sim.url);
  const kubeconfig = async (account: string): Promise<string> => {
    const path = join(dir, `${account}.kubeconfig`);
    writeFileSync(path, renderKubeconfig(proxy.url, await sim.tokenFor(`drainbridge/${account}`), sim.caPem), {
      mode: 0o600,
    });
    return path;
  };
  // With --nova, both replicas and the CLI users are configured for Nova as an operator deploys them.
  const env = { ...soakEnv(options), ...(nova ? drainbridgeNovaEnv(nova.openrc, dir) : {}) };
  const runArgs = [
    'run',
    '--kubeconfig',
    await kubeconfig('drainbridge-run'),
    '--cordon-evacuates',
    'all',
    '--metrics-address',
    '127.0.0.1:0',
    '--retry-interval-ms',
    '500',
  ];
  // The bus endpoint for the node agents: TLS with a certificate as a TLS Secret mounts it, the shared key.
  const cert = makeTestCertificate();
  const busKey = randomBytes(32).toString('hex');
  const busPorts = [await freePort(), await freePort()];
  const busEnv = {
    DRAINBRIDGE_BUS_KEY: busKey,
    DRAINBRIDGE_BUS_TLS_CERT: cert.certFile,
    DRAINBRIDGE_BUS_TLS_KEY: cert.keyFile,
  };
  const replicas = ['a', 'b'].map(
    (name, i) =>
      new Replica(
        `run-${name}`,
        // As long as a Deployment pod's name (the default identity): the execution ids it makes are as long as
        // a deployed run's (the interpreter's States.Hash went wrong on long ids only, embedded/exact-hash.ts).
        [
          ...runArgs,
          '--identity',
          `drainbridge-run-7c9d5b8f6-soak${name}`,
          '--bus-address',
          `127.0.0.1:${busPorts[i]}`,
        ],
        { ...env, ...busEnv },
        dir,
      ),
  );
  const busFront: BusFront = await startBusFront(busPorts);
  const nodes = Array.from({ length: options.nodes }, (_, i) => soakNodeName(i));
  const clouds = await startClouds(nodes, {
    kubeconfig: await kubeconfig('drainbridge-node-agent'),
    busUrl: busFront.url,
    busKey,
    busCa: cert.certFile,
    dir,
  });
  return {
    busFront,
    sim,
    proxy,
    random: seededRandom(options.seed),
    people: { cordoned: new Set() } satisfies People,
    replicas,
    kubectl: new Kubectl(binary, sim.kubeconfig()),
    nodes,
    dir,
    cliKubeconfig: await kubeconfig('drainbridge'),
    env,
    cli: [],
    nodeMaintenances: new Map(),
    heal: new Set(),
    counts: new Map(),
    busy: undefined,
    serial: 0,
    clouds,
    notices: [],
    nova,
  };
}
