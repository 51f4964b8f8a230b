/**
 * The cloud e2e tests' cluster: the packaged state machines embedded over the simulator at 200× speed,
 * running `webScenario`, every bus event recorded with the simulated time, and a client as the node
 * agent's ServiceAccount (least privilege: AGENT_RBAC). The other e2e-*.test.ts files still build this by hand.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../lib/clients/kube/client.ts';
import { startWorkflowSim, type WorkflowSim } from '../workflow/harness.ts';
import { AGENT_RBAC, webScenario } from './harness.ts';
import { type BusLog, recordBus } from './timing.ts';

export interface NoticeE2e {
  readonly w: WorkflowSim;
  /** The node agent's client, as its ServiceAccount. */
  readonly agentKube: KubeClient;
  /** Every bus event, with the simulated time it was put. */
  readonly bus: BusLog;
  readonly simNow: () => number;
}

export async function startNoticeE2e(
  name: string,
  nodes: readonly { name: string; providerID: string }[],
  replicas: number,
): Promise<NoticeE2e> {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const bus: BusLog = [];
  let simNow = () => Date.now();
  const w = await startWorkflowSim(webScenario(name, nodes, replicas), {
    env: { DRAINBRIDGE_MAX_HELD_NODES: String(nodes.length) },
    runtime: { onBusEvent: recordBus(bus, () => simNow()) },
  });
  simNow = () => w.sim.clock.now();
  w.sim.apply(AGENT_RBAC, 'node agent RBAC');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(w.sim.kubeconfig(await w.sim.tokenFor('drainbridge/node-agent')));
  const agentKube = new KubeClient(kubeConfig, { retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  return { w, agentKube, bus, simNow };
}
