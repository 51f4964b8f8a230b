/**
 * The forwarder's benchmark (`npm run bench:forwarder`): a real `drainbridge forwarder` child process
 * against the simulator, publishing through the real AWS SDK to a local PutEvents endpoint.
 *
 *  1. cordon → event on the bus: 20 cordons (PATCH as kubectl sends it), one every 300 ms; latency from
 *     the API's answer to the PutEvents call accepted; p50 / p95 (target p50 ≤ 200 ms);
 *  2. resident memory (VmRSS of the process) idle with 25 nodes, then with 1,000 nodes idle and during
 *     churn (label changes and cordons on random nodes) — target ≤ 80 MiB;
 *  3. API requests per minute while idle (1,000 nodes): by verb and resource, from the simulator's log;
 *  4. the node agent (`--node-agent`, the DaemonSet's flags) idle on one node: RSS and CPU.
 *
 * It runs the image's bundle (dist/drainbridge.mjs, built first from the current sources) with the Node flags
 * of the forwarder's Deployment (deploy/components/forwarder), as deployed; CPU time is reported beside
 * memory, because those flags trade CPU for memory.
 *
 *   npm run bench:forwarder -- [--idle-seconds 60] [--churn-seconds 30] [--churn-rate 50] [--agent-seconds 30] [--nodes 1000]
 *
 * `--nodes 5000` measures 2. and 3. with 5,000 nodes: issue 23's target there is ≤ 120 MiB.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { InProcessBus } from '../lib/bus/in-process-bus.ts';
import { type EventBridgeEndpoint, startEventBridgeEndpoint } from '../sim/eventbridge/endpoint.ts';
import { FakeAzureMetadata } from '../sim/metadata/index.ts';
import {
  DrainbridgeProcess,
  FORWARDER_USER,
  forwarderNodeFlags,
  spreadScenario,
  startTestCluster,
  type TestCluster,
} from '../test/forwarder/harness.ts';
import { waitUntil } from '../test/support/wait.ts';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} must be a positive number`);
    process.exit(2);
  }
  return value;
}

/** The image's bundle: what runs in the cluster (the sources through type stripping cost ~60 MiB more). */
const BUNDLE = 'dist/drainbridge.mjs';

const IDLE_SECONDS = option('idle-seconds', 60);
const CHURN_SECONDS = option('churn-seconds', 30);
const CHURN_RATE = option('churn-rate', 50);
const AGENT_SECONDS = option('agent-seconds', 30);
/** Nodes of the memory and idle-request measurements (2, 3). */
const NODES = Math.round(option('nodes', 1000));
/** The RSS target: ≤ 80 MiB with 1,000 nodes (issue 14), ≤ 120 MiB with 5,000 (issue 23). */
const RSS_TARGET_MIB = NODES > 1000 ? 120 : 80;
const NODES_SHOWN = NODES.toLocaleString('en-GB');

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of /proc/PID/stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Setup {
  cluster: TestCluster;
  bus: InProcessBus;
  endpoint: EventBridgeEndpoint;
  forwarder: DrainbridgeProcess;
  /** When each node's Node Cordoned reached the endpoint (ms since epoch). */
  arrivals: Map<string, number>;
}

async function setUp(nodes: number): Promise<Setup> {
  const scenario = { ...spreadScenario(nodes, { replicas: 0, speed: 1 }), workloads: [] };
  const cluster = await startTestCluster(scenario);
  const arrivals = new Map<string, number>();
  const bus = new InProcessBus({
    rules: [],
    busName: 'drainbridge',
    start: async () => undefined,
    listener: {
      unmatched: (event) => {
        const node = (event.detail.target as { nodeName?: string }).nodeName ?? '';
        if (event['detail-type'] === 'Node Cordoned' && !arrivals.has(node)) arrivals.set(node, Date.now());
      },
    },
  });
  // `unmatched` fires after PutEvents answered; the arrival is the accept, so record it there.
  const endpoint = await startEventBridgeEndpoint(bus);
  const forwarder = new DrainbridgeProcess(
    [
      'forwarder',
      '--kubeconfig',
      await cluster.kubeconfigFor('drainbridge-forwarder'),
      '--cordon-evacuates',
      'all',
      '--metrics-address',
      '127.0.0.1:0',
    ],
    {
      AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint.url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDBENCH',
      AWS_SECRET_ACCESS_KEY: 'bench',
      DRAINBRIDGE_NODE_MAINTENANCE: 'true',
    },
    { entry: BUNDLE, nodeFlags: forwarderNodeFlags() },
  );
  await waitUntil(
    'the forwarder is ready',
    async () => {
      const line = forwarder.lines.find((l) => l.message === 'forwarder started');
      if (!line) return false;
      return (await fetch(`${String(line.ops)}/readyz`).catch(() => undefined))?.status === 200;
    },
    120_000,
  );
  await waitUntil(
    'it leads',
    async () => {
      const line = forwarder.lines.find((l) => l.message === 'forwarder started');
      return (await (await fetch(`${String(line?.ops)}/metrics`)).text()).includes('drainbridge_forwarder_leader 1');
    },
    60_000,
  );
  return { cluster, bus, endpoint, forwarder, arrivals };
}

async function tearDown(setup: Setup): Promise<void> {
  setup.forwarder.kill('SIGTERM');
  await setup.forwarder.exited;
  await setup.endpoint.close();
  await setup.cluster.stop();
}

/** A merge patch as the admin (drainbridge's one client; the time measured starts when the API answered). */
async function patchNode(cluster: TestCluster, name: string, body: Record<string, unknown>): Promise<void> {
  await cluster.admin.patchNode(name, body as never);
}

async function latency(): Promise<{ p50: number; p95: number; max: number; rssIdle: number }> {
  const setup = await setUp(25);
  await sleep(2000);
  const rssIdle = rssMiB(setup.forwarder.pid as number);
  const latencies: number[] = [];
  for (let i = 1; i <= 20; i++) {
    const node = `node-${i}`;
    await patchNode(setup.cluster, node, { spec: { unschedulable: true } });
    const answered = Date.now();
    await waitUntil(`${node} on the bus`, () => setup.arrivals.has(node), 10_000, {
      context: () => setup.forwarder.output.slice(-15).join('\n'),
    });
    latencies.push((setup.arrivals.get(node) as number) - answered);
    await sleep(300);
  }
  await tearDown(setup);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), rssIdle };
}

async function scale(): Promise<{
  rssIdle: number;
  rssChurnMax: number;
  perMinute: Record<string, number>;
  changes: number;
  cpuIdle: number;
  cpuChurn: number;
}> {
  const setup = await setUp(NODES);
  const pid = setup.forwarder.pid as number;
  // Idle: count every request the forwarder makes.
  const mark = setup.cluster.sim.requestLog.mark();
  const cpuAtIdle = cpuSeconds(pid);
  await sleep(IDLE_SECONDS * 1000);
  const cpuIdle = (cpuSeconds(pid) - cpuAtIdle) / IDLE_SECONDS;
  const requests = setup.cluster.sim.requestLog.all({ since: mark }).filter((r) => r.user === FORWARDER_USER);
  const perMinute: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.verb} ${r.resource}`;
    perMinute[key] = (perMinute[key] ?? 0) + 60 / IDLE_SECONDS;
  }
  const rssIdle = rssMiB(pid);
  // Churn: label changes on random nodes, every tenth a cordon or uncordon.
  let rssChurnMax = rssIdle;
  let changes = 0;
  const cpuAtChurn = cpuSeconds(pid);
  const churnStarted = Date.now();
  const end = Date.now() + CHURN_SECONDS * 1000;
  const sampler = setInterval(() => {
    rssChurnMax = Math.max(rssChurnMax, rssMiB(pid));
  }, 250);
  while (Date.now() < end) {
    const node = `node-${1 + Math.floor(Math.random() * NODES)}`;
    const body =
      changes % 10 === 0
        ? { spec: { unschedulable: changes % 20 === 0 } }
        : { metadata: { labels: { churn: String(changes) } } };
    await patchNode(setup.cluster, node, body);
    changes++;
    await sleep(1000 / CHURN_RATE);
  }
  clearInterval(sampler);
  const cpuChurn = (cpuSeconds(pid) - cpuAtChurn) / ((Date.now() - churnStarted) / 1000);
  await tearDown(setup);
  return { rssIdle, rssChurnMax, perMinute, changes, cpuIdle, cpuChurn };
}

// Always from the current sources (a few seconds): a stale dist/ would measure other code.
execFileSync(process.execPath, ['scripts/bundle.ts'], { stdio: 'inherit' });
const started = Date.now();
/** The node agent (DaemonSet) idle on one node: Azure Scheduled Events read every 2 s, one notice pending. */
async function nodeAgent(): Promise<{ rss: number; cpu: number }> {
  const cluster = await startTestCluster({ ...spreadScenario(3, { replicas: 0, speed: 1 }), workloads: [] });
  const imds = await FakeAzureMetadata.start({ vmName: 'node-1' });
  imds.putEvent({
    EventId: 'B6A0F0A1-0000-4000-8000-000000000001',
    EventStatus: 'Scheduled',
    EventType: 'Freeze',
    ResourceType: 'VirtualMachine',
    Resources: ['node-1'],
    NotBefore: new Date(Date.now() + 3_600_000).toUTCString(),
    Description: 'Host server is undergoing maintenance.',
    EventSource: 'Platform',
    DurationInSeconds: 9,
  });
  const agent = new DrainbridgeProcess(
    [
      'forwarder',
      '--node-agent',
      '--node',
      'node-1',
      '--provider',
      'azure',
      '--kubeconfig',
      await cluster.kubeconfigFor('drainbridge-node-agent'),
      '--metrics-address',
      '127.0.0.1:0',
    ],
    {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDBENCH',
      AWS_SECRET_ACCESS_KEY: 'bench',
      DRAINBRIDGE_AGENT_AZURE_URL: imds.url,
    },
    { entry: BUNDLE, nodeFlags: forwarderNodeFlags('deploy/components/node-agent/daemonset.yaml') },
  );
  await agent.waitForLog('notice ignored by the policy', {}, 60_000);
  const pid = agent.pid as number;
  const cpuAt = cpuSeconds(pid);
  await sleep(AGENT_SECONDS * 1000);
  const result = { rss: rssMiB(pid), cpu: (cpuSeconds(pid) - cpuAt) / AGENT_SECONDS };
  agent.kill('SIGTERM');
  await agent.exited;
  await imds.server.stop();
  await cluster.stop();
  return result;
}

const small = await latency();
const big = await scale();
const agent = await nodeAgent();
const lines = [
  `drainbridge forwarder benchmark (${new Date().toISOString()}, ${((Date.now() - started) / 1000).toFixed(0)} s)`,
  `node ${forwarderNodeFlags().join(' ')} dist/drainbridge.mjs forwarder; load average at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
  '',
  `cordon → event on the bus, 20 cordons: p50 ${small.p50} ms, p95 ${small.p95} ms, max ${small.max} ms (target p50 ≤ 200 ms)`,
  `RSS idle, 25 nodes: ${small.rssIdle.toFixed(1)} MiB`,
  `RSS idle, ${NODES_SHOWN} nodes: ${big.rssIdle.toFixed(1)} MiB; during churn (${big.changes} node changes in ${CHURN_SECONDS} s): max ${big.rssChurnMax.toFixed(1)} MiB (target ≤ ${RSS_TARGET_MIB} MiB)`,
  `CPU, ${NODES_SHOWN} nodes: idle ${(big.cpuIdle * 100).toFixed(1)} % of a core; during churn ${(big.cpuChurn * 100).toFixed(1)} %`,
  `node agent (--node-agent, Azure, reads every 2 s): RSS ${agent.rss.toFixed(1)} MiB after ${AGENT_SECONDS} s, CPU ${(agent.cpu * 100).toFixed(1)} % of a core`,
  `API requests per minute when idle (${NODES_SHOWN} nodes, leader, ${IDLE_SECONDS} s window):`,
  ...Object.entries(big.perMinute)
    .sort()
    .map(([key, count]) => `  ${key.padEnd(28)} ${count.toFixed(1)}`),
  `  total                        ${Object.values(big.perMinute)
    .reduce((a, b) => a + b, 0)
    .toFixed(1)}`,
];
console.log(lines.join('\n'));
process.exit(0);
