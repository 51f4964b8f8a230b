/**
 * The soak's Nova side (`--nova`): servers booted on the lab's compute hosts at the start, Nova sampled
 * every few seconds from its own API (services and the booted servers: every change kept for the
 * checker), the operator who disables a host's nova-compute with their own reason and enables it again
 * later, and the clean-up that leaves the lab as it was found (servers deleted, services enabled, lock
 * released). Every Nova call of the soak goes through one queue, so a sample never interleaves with the
 * operator's act: a change seen while the operator's disable stands is someone else's.
 */
import type { ChildProcess } from 'node:child_process';
import { bootServers, compute, HOSTS, type Lab } from '../test/e2e/openstack/support.ts';
import type { NovaHistory, NovaServerState, NovaServiceState, OperatorNovaDisable } from './log.ts';
import {
  checkComputes,
  checkKeystoneAnswers,
  connectLab,
  LAB_DIR,
  lockLab,
  readOpenrc,
  unlockLab,
} from './nova-lab.ts';
import type { Random } from './random.ts';

/** Servers booted per compute host at the start (m1.tiny, blank local disk, fake driver). */
const SERVERS_PER_HOST = 2;
const SAMPLE_EVERY_MS = 5_000;
/** An operator's disable stands at least this long before they enable the host again. */
const OPERATOR_DISABLE_MIN_MS = 30_000;

interface ListedServer {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly 'OS-EXT-SRV-ATTR:host'?: string | null;
}

type Stamped<T> = T & { at: number };

/** One look at Nova: host → service, booted server id → server. */
interface Look {
  readonly services: Map<string, NovaServiceState>;
  readonly servers: Map<string, NovaServerState>;
}

export class NovaSoak {
  /** The OS_* variables of the lab's openrc (drainbridge gets them as a clouds.yaml: nova-lab.ts). */
  readonly openrc: Record<string, string>;
  readonly nodeOf: Readonly<Record<string, string>>;
  readonly #lab: Lab;
  readonly #lock: ChildProcess;
  readonly #serviceIds: Map<string, string>;
  #queue: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #servers: { id: string; name: string; host: string }[] = [];
  readonly #lastService = new Map<string, string>();
  readonly #lastServer = new Map<string, string>();
  readonly #serviceChanges: Stamped<NovaServiceState & { host: string }>[] = [];
  readonly #serverChanges: Stamped<NovaServerState & { id: string }>[] = [];
  readonly #operator: OperatorNovaDisable[] = [];
  #samples = 0;
  #failedSamples = 0;

  private constructor(
    parts: { openrc: Record<string, string>; lab: Lab; lock: ChildProcess; serviceIds: Map<string, string> },
    nodeOf: Readonly<Record<string, string>>,
  ) {
    this.openrc = parts.openrc;
    this.#lab = parts.lab;
    this.#lock = parts.lock;
    this.#serviceIds = parts.serviceIds;
    this.nodeOf = nodeOf;
  }

  /**
   * Reaches the lab, takes its lock and checks that every compute is up and enabled; throws
   * NovaLabUnavailable (naming how to bring the lab up) at once when it cannot. `nodeOf`: host → soak node.
   */
  static async open(nodeOf: Readonly<Record<string, string>>, labDir = LAB_DIR): Promise<NovaSoak> {
    const openrc = readOpenrc(labDir);
    await checkKeystoneAnswers(openrc, labDir);
    const lock = await lockLab(labDir);
    try {
      const lab = await connectLab(openrc);
      const serviceIds = await checkComputes(lab);
      return new NovaSoak({ openrc, lab, lock, serviceIds }, nodeOf);
    } catch (error) {
      unlockLab(lock);
      throw error;
    }
  }

  #serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(step, step);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Boots SERVERS_PER_HOST servers on each compute host, named `<prefix>-<host>-NN`, and waits until all are ACTIVE. */
  async bootServers(prefix: string): Promise<void> {
    for (const host of HOSTS) {
      const ids = await bootServers(this.#lab, host, SERVERS_PER_HOST, `${prefix}-${host}`);
      const listed = await this.#listServers();
      for (const id of ids) this.#servers.push({ id, name: listed.get(id)?.name ?? id, host });
    }
  }

  async #listServers(): Promise<Map<string, ListedServer>> {
    const { servers } = await compute<{ servers: ListedServer[] }>(this.#lab, 'GET', '/servers/detail?all_tenants=1');
    return new Map(servers.map((s) => [s.id, s]));
  }

  async #services(): Promise<Map<string, NovaServiceState>> {
    const services = await this.#lab.nova.listComputeServices();
    return new Map(
      services.map((s) => [
        s.host,
        s.status === 'enabled' ? { status: s.status } : { status: s.status, reason: s.disabledReason ?? '' },
      ]),
    );
  }

  /** One look at Nova: the services' and the booted servers' changes since the last look. */
  async #look(): Promise<Look> {
    const at = Date.now();
    const services = await this.#services();
    const listed = await this.#listServers();
    const servers = new Map<string, NovaServerState>(
      this.#servers.map((s) => {
        const seen = listed.get(s.id);
        return [s.id, seen ? { status: seen.status, host: seen['OS-EXT-SRV-ATTR:host'] ?? null } : GONE];
      }),
    );
    for (const [host, state] of services) {
      if (this.#changed(this.#lastService, host, state)) this.#serviceChanges.push({ ...state, host, at });
    }
    for (const [id, state] of servers) {
      if (this.#changed(this.#lastServer, id, state)) this.#serverChanges.push({ ...state, id, at });
    }
    this.#samples++;
    return { services, servers };
  }

  #changed(last: Map<string, string>, key: string, state: object): boolean {
    const text = JSON.stringify(state);
    if (last.get(key) === text) return false;
    last.set(key, text);
    return true;
  }

  async #sample(): Promise<void> {
    try {
      await this.#serial(() => this.#look());
    } catch {
      // Nova not answering for a moment (the lab is busy) is a hole in what was seen, counted in the report.
      this.#failedSamples++;
    }
  }

  startSampling(): void {
    let running = false;
    this.#timer = setInterval(() => {
      if (running) return;
      running = true;
      void this.#sample().finally(() => {
        running = false;
      });
    }, SAMPLE_EVERY_MS);
    this.#timer.unref();
    void this.#sample();
  }

  /**
   * The operator disables an enabled host's nova-compute themself, with their own reason (a hardware
   * check). Answers the event's kind, or undefined when every host is disabled already.
   */
  async operatorDisables(random: Random, serial: number): Promise<string | undefined> {
    return this.#serial(async () => {
      const services = await this.#services();
      const enabled = HOSTS.filter((h) => services.get(h)?.status === 'enabled');
      if (enabled.length === 0) return undefined;
      const host = random.pick(enabled);
      const reason = `operator: hardware check ${serial} (soak)`;
      await this.#lab.nova.disableService(this.#serviceId(host), reason);
      this.#operator.push({ host, reason, from: Date.now() });
      return 'operator disables nova-compute';
    });
  }

  /** The operator enables again a host they disabled (after it stood OPERATOR_DISABLE_MIN_MS), whatever they find. */
  async operatorEnables(random: Random): Promise<string | undefined> {
    const due = this.#standing().filter((d) => Date.now() - d.from >= OPERATOR_DISABLE_MIN_MS);
    if (due.length === 0) return undefined;
    await this.#endOperatorDisable(random.pick(due));
    return 'operator enables nova-compute again';
  }

  #standing(): OperatorNovaDisable[] {
    return this.#operator.filter((d) => d.until === undefined);
  }

  #endOperatorDisable(d: OperatorNovaDisable): Promise<void> {
    return this.#serial(async () => {
      const found = (await this.#services()).get(d.host);
      // From here on an enable of this host is the operator's own.
      const ended: OperatorNovaDisable = { ...d, until: Date.now(), ...(found ? { foundBeforeEnable: found } : {}) };
      this.#operator.splice(this.#operator.indexOf(d), 1, ended);
      await this.#lab.nova.enableService(this.#serviceId(d.host));
    });
  }

  /** The epilogue: the operator ends every disable of theirs still standing. */
  async endOperatorDisables(): Promise<void> {
    for (const d of this.#standing()) await this.#endOperatorDisable(d);
  }

  #serviceId(host: string): string {
    const id = this.#serviceIds.get(host);
    if (!id) throw new Error(`no nova-compute service id for ${host}`);
    return id;
  }

  /** Stops sampling and takes the last look (after the epilogue): what the checker judges. */
  async finish(): Promise<NovaHistory> {
    clearInterval(this.#timer);
    const end = await this.#lastLook();
    return {
      nodeOf: this.nodeOf,
      servers: [...this.#servers],
      samples: this.#samples,
      failedSamples: this.#failedSamples,
      serviceChanges: [...this.#serviceChanges],
      serverChanges: [...this.#serverChanges],
      operatorDisables: [...this.#operator],
      servicesAtEnd: Object.fromEntries(end.services),
      serversAtEnd: Object.fromEntries(end.servers),
    };
  }

  /** The look after the epilogue, tried three times 5 s apart (nova-api busy a moment is no reason to judge nothing). */
  async #lastLook(): Promise<Look> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#serial(() => this.#look());
      } catch (error) {
        if (attempt >= 3) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
    }
  }

  /**
   * Leaves the lab as found, for the e2e suite: the booted servers deleted (waited for, 2 minutes), every
   * compute enabled (each was at the start), the lock released. Answers what it did, for the report.
   */
  async leaveAsFound(): Promise<string> {
    clearInterval(this.#timer);
    const said: string[] = [];
    try {
      said.push(await this.#deleteServers());
      const services = await this.#lab.nova.listComputeServices();
      for (const service of services.filter((s) => s.status === 'disabled' && HOSTS.includes(s.host))) {
        await this.#lab.nova.enableService(service.id);
        said.push(`enabled nova-compute on ${service.host} (it was left disabled: "${service.disabledReason ?? ''}")`);
      }
      if (said.length === 1) said.push('every compute was enabled');
    } catch (error) {
      said.push(`clean-up failed: ${(error as Error).message} — see test/e2e/openstack/README.md`);
    } finally {
      unlockLab(this.#lock);
    }
    return said.join('; ');
  }

  async #deleteServers(): Promise<string> {
    const listed = await this.#listServers();
    const ours = this.#servers.filter((s) => listed.has(s.id));
    for (const server of ours) await compute(this.#lab, 'DELETE', `/servers/${server.id}`);
    const deadline = Date.now() + 120_000;
    let left = ours.length;
    while (left > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const now = await this.#listServers();
      left = ours.filter((s) => now.has(s.id)).length;
    }
    return left === 0 ? `${ours.length} booted servers deleted` : `${left} booted servers still being deleted`;
  }
}

const GONE: NovaServerState = { status: 'GONE', host: null };
