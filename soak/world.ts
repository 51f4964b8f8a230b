/** What the soak's actions act on: the cluster, the replicas, the people and the CLI users. */
import type { Simulator } from '../sim/index.ts';
import type { Kubectl } from '../test/fidelity/kubectl-runner.ts';
import type { BusFront } from './bus-front.ts';
import type { CloudNode, MutableNotice } from './clouds.ts';
import type { NovaSoak } from './nova.ts';
import type { People } from './observe.ts';
import type { Child, Exit, Replica } from './processes.ts';
import type { OutageProxy } from './proxy.ts';
import type { Random } from './random.ts';

/** A CLI command the soak's users ran. */
export interface CliRun {
  readonly command: 'evacuate' | 'restore' | 'abort';
  readonly node: string;
  readonly requestId: string;
  readonly child: Child;
  exit?: Exit;
  interrupted?: boolean;
}

export interface SoakWorld {
  readonly sim: Simulator;
  readonly proxy: OutageProxy;
  /** The Service in front of the replicas' bus endpoints (the node agents publish there). */
  readonly busFront: BusFront;
  /** This event's random source (each event gets its own, drawn from the seed: see schedule.ts). */
  random: Random;
  readonly people: People;
  readonly replicas: readonly Replica[];
  /** The admin's kubectl, straight to the simulator: the people at their keyboards. */
  readonly kubectl: Kubectl;
  readonly nodes: readonly string[];
  /** Where process logs go. */
  readonly dir: string;
  /** drainbridge's ServiceAccount kubeconfig (through the proxy), for the CLI users. */
  readonly cliKubeconfig: string;
  /** The drainbridge settings every process gets (DRAINBRIDGE_MAX_HELD_NODES …). */
  readonly env: Record<string, string>;
  readonly cli: CliRun[];
  /** NodeMaintenances the soak created and has not deleted. */
  readonly nodeMaintenances: Map<string, string>;
  /** Undo functions of the faults in force (healed at the end). */
  readonly heal: Set<() => void>;
  /** Faults and events done, by kind. */
  readonly counts: Map<string, number>;
  /** A fault that runs for a while (an outage) is under way. */
  busy: Promise<void> | undefined;
  serial: number;
  /** The cloud nodes: each a fake metadata server and the node agent process reading it. */
  readonly clouds: readonly CloudNode[];
  /** Every cloud notice served so far. */
  readonly notices: MutableNotice[];
  /** The Nova lab's side (`--nova`); undefined without it. */
  readonly nova: NovaSoak | undefined;
}
