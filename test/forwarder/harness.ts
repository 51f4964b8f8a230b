/**
 * Shared by the forwarder and `drainbridge run` suites: a simulated cluster with drainbridge's deploy/
 * base and the ServiceAccounts + RBAC of the forwarder and run components applied, kubeconfig files per
 * ServiceAccount, the real kubectl as the cluster admin, and real `drainbridge` child processes whose
 * JSON log lines the tests wait on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import { findKubectl, Kubectl } from '../fidelity/kubectl-runner.ts';
import { waitUntil } from '../support/wait.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** deploy/ files a cluster admin applies: the base, and the forwarder's, run's and the node agent's accounts and bindings. */
export const CLUSTER_MANIFESTS = [
  'deploy/base/crds/evacuations.yaml',
  'deploy/base/crds/nodemaintenances.yaml',
  'deploy/base/rbac/drainbridge.yaml',
  'deploy/base/rbac/forwarder.yaml',
  'deploy/base/rbac/node-agent.yaml',
  'deploy/components/forwarder/serviceaccount.yaml',
  'deploy/components/forwarder/rbac.yaml',
  'deploy/components/run/serviceaccount.yaml',
  'deploy/components/run/rbac.yaml',
  'deploy/components/node-agent/serviceaccount.yaml',
  'deploy/components/node-agent/rbac.yaml',
];

export const FORWARDER_USER = 'system:serviceaccount:drainbridge:drainbridge-forwarder';
export const RUN_USER = 'system:serviceaccount:drainbridge:drainbridge-run';
export const NODE_AGENT_USER = 'system:serviceaccount:drainbridge:drainbridge-node-agent';

/** `count` schedulable nodes, `web` spread over them, a DaemonSet on each. */
export function spreadScenario(count: number, options: { replicas?: number; speed?: number } = {}) {
  return {
    name: `forwarder-${count}`,
    speed: options.speed ?? 20,
    podStartupDelaySeconds: 1,
    nodes: Array.from({ length: count }, (_, i) => ({ name: `node-${i + 1}` })),
    namespaces: ['shop', 'monitoring'],
    workloads: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
        spec: {
          replicas: options.replicas ?? 6,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
          },
        },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: 'monitoring', labels: { app: 'agent' } },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: { containers: [{ name: 'agent', image: 'agent:1' }] },
          },
        },
      },
    ],
  };
}

export interface TestCluster {
  readonly sim: Simulator;
  readonly dir: string;
  /** The admin's kubectl (the person at the keyboard). */
  readonly kubectl: Kubectl;
  /** The admin's client, to read what the cluster holds. */
  readonly admin: KubeClient;
  /** A kubeconfig file for ServiceAccount drainbridge/<name>. */
  kubeconfigFor(
    account: 'drainbridge' | 'drainbridge-forwarder' | 'drainbridge-run' | 'drainbridge-node-agent',
  ): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestCluster(
  scenario: Record<string, unknown>,
  options: { historySize?: number } = {},
): Promise<TestCluster> {
  const sim = await startSimulator({ scenario, ...(options.historySize ? { historySize: options.historySize } : {}) });
  for (const file of CLUSTER_MANIFESTS) sim.apply(readFileSync(join(ROOT, file), 'utf8'), file);
  if (sim.scenario) await whenSettled(sim.store, sim.scenario, 30_000);
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-fwd-'));
  const kubectlBinary = findKubectl();
  if (!kubectlBinary) throw new Error('these suites need the real kubectl on PATH');
  const kubectl = new Kubectl(kubectlBinary, sim.kubeconfig());
  const adminConfig = new KubeConfig();
  adminConfig.loadFromString(sim.kubeconfig());
  return {
    sim,
    dir,
    kubectl,
    admin: new KubeClient(adminConfig),
    kubeconfigFor: async (account) => {
      const path = join(dir, `${account}.kubeconfig`);
      writeFileSync(path, sim.kubeconfig(await sim.tokenFor(`drainbridge/${account}`)), { mode: 0o600 });
      return path;
    },
    stop: async () => {
      kubectl.close();
      await sim.stop();
    },
  };
}

/** A pod's ServiceAccount directory for drainbridge/`account` of `cluster`. */
export async function serviceAccountDir(
  cluster: TestCluster,
  account: 'drainbridge-forwarder' | 'drainbridge-run',
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sa-'));
  writeFileSync(join(dir, 'token'), await cluster.sim.tokenFor(`drainbridge/${account}`), { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), cluster.sim.caPem ?? '');
  writeFileSync(join(dir, 'namespace'), 'drainbridge');
  return dir;
}

/** The variables a pod's container gets for the API server, naming the simulator. */
export function podEnvironment(cluster: TestCluster, dir: string): Record<string, string> {
  const server = new URL(cluster.sim.url);
  return {
    DRAINBRIDGE_KUBE_ACCESS: 'in-cluster',
    KUBERNETES_SERVICE_HOST: server.hostname,
    KUBERNETES_SERVICE_PORT: server.port,
    DRAINBRIDGE_SERVICE_ACCOUNT_DIR: dir,
  };
}

/** One JSON log line of a drainbridge process. */
export type LogLine = Record<string, unknown> & { message?: string };

/** A `drainbridge` child process (the TypeScript sources on this Node 24), its log lines parsed. */
export class DrainbridgeProcess {
  readonly lines: LogLine[] = [];
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;

  /**
   * `entry`: the TypeScript sources' bin/drainbridge.js (default) or the image's bundle, dist/drainbridge.mjs;
   * `nodeFlags`: Node's own options before it (the image's, for the bundle); `cwd`: where it runs.
   */
  constructor(
    args: readonly string[],
    env: Record<string, string>,
    options: { entry?: string; nodeFlags?: readonly string[]; cwd?: string } = {},
  ) {
    const entry = options.entry ?? join(ROOT, 'bin/drainbridge.js');
    this.#child = spawn(process.execPath, [...(options.nodeFlags ?? []), entry, ...args], {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), POWERTOOLS_LOG_LEVEL: 'INFO', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    const take = (chunk: Buffer): void => {
      buffer += chunk.toString('utf8');
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        this.output.push(line);
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          // not a log line (a usage message)
        }
      }
    };
    this.#child.stdout?.on('data', take);
    this.#child.stderr?.on('data', take);
    this.exited = new Promise((resolve) => this.#child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Log lines with this message (and fields). */
  logs(message: string, fields: Record<string, unknown> = {}): LogLine[] {
    return this.lines.filter(
      (line) => line.message === message && Object.entries(fields).every(([key, value]) => line[key] === value),
    );
  }

  async waitForLog(message: string, fields: Record<string, unknown> = {}, limitMs = 30_000): Promise<LogLine> {
    await waitUntil(
      `log "${message}" ${JSON.stringify(fields)}`,
      () => this.logs(message, fields).length > 0,
      limitMs,
      { context: () => this.output.slice(-20).join('\n') },
    );
    return this.logs(message, fields)[0] as LogLine;
  }

  /** The ops endpoint's URL (from the "forwarder started" line). */
  async opsUrl(): Promise<string> {
    return String((await this.waitForLog('forwarder started')).ops);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.#child.kill(signal);
  }
}

/**
 * Starts `drainbridge run` as the tests run it — metrics on a free port, every Retry interval 100 ms, the
 * ServiceAccount drainbridge-run's kubeconfig (unless `inCluster`: the caller's `env` then says where the
 * API server and the ServiceAccount are) — and resolves once it leads.
 */
export async function startRun(
  cluster: TestCluster,
  options: {
    readonly identity: string;
    readonly cordonEvacuates?: string;
    readonly env?: Record<string, string>;
    readonly inCluster?: boolean;
    /** A kubeconfig file of drainbridge-run's other than the cluster's own (e.g. through a fault proxy). */
    readonly kubeconfig?: string;
    readonly leadWithinMs?: number;
  },
): Promise<DrainbridgeProcess> {
  const kubeconfig = options.kubeconfig ?? (await cluster.kubeconfigFor('drainbridge-run'));
  const access = options.inCluster ? [] : ['--kubeconfig', kubeconfig];
  const cordons = options.cordonEvacuates ? ['--cordon-evacuates', options.cordonEvacuates] : [];
  const run = new DrainbridgeProcess(
    [
      'run',
      ...access,
      ...cordons,
      '--metrics-address',
      '127.0.0.1:0',
      '--retry-interval-ms',
      '100',
      '--identity',
      options.identity,
    ],
    { ...options.env },
  );
  try {
    await run.waitForLog('leader election: this replica leads', {}, options.leadWithinMs ?? 60_000);
  } catch (error) {
    run.kill('SIGKILL');
    throw error;
  }
  return run;
}

/**
 * The Node options a workload in deploy/ runs the image with (the container's `command` between `node`
 * and the bundle), so benchmarks and the smoke test run it as deployed: the forwarder's Deployment by
 * default, or e.g. `deploy/components/node-agent/daemonset.yaml`.
 */
export function forwarderNodeFlags(manifest = 'deploy/components/forwarder/deployment.yaml'): string[] {
  const workload = parse(readFileSync(join(ROOT, manifest), 'utf8')) as {
    spec: { template: { spec: { containers: { command?: string[] }[] } } };
  };
  const command = workload.spec.template.spec.containers[0]?.command ?? [];
  if (command[0] !== 'node' || !command.at(-1)?.endsWith('drainbridge.mjs'))
    throw new Error(`${manifest}: the command is not "node [flags] /app/drainbridge.mjs": ${command.join(' ')}`);
  return command.slice(1, -1);
}

/** A Prometheus sample's value from a /metrics text, e.g. `metric(text, 'x_total', { a: 'b' })`. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (wanted.every((pair) => rest.includes(pair))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}
