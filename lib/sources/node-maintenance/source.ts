/**
 * The NodeMaintenance source: a small controller over NodeMaintenances, their Evacuation records and
 * their nodes (informers), acting as decide.ts decides while this replica leads — finalizers, the status
 * mirror and refusal Events are written here; `Maintenance Requested` / `Maintenance Ended` go through
 * the forwarder's publishing path like every other source's events. One CR is reconciled at a time.
 *
 * Is node-maintenance-operator installed? Read from the NodeMaintenance CRD (nmo.ts) when this replica
 * takes the lead, and again before deciding about a NodeMaintenance it has not adopted — the only decision
 * NMO's presence changes (an adopted CR is seen through) — at most once per pass over the changed CRs. So
 * NMO installed later (its CRD appearing where there was none, or taking over drainbridge's) is seen by
 * the next NodeMaintenance. Not a watch: that needs list/watch on CRDs (the name-restricted rule works
 * only with a field selector) and one more open watch per replica for a fact that matters only at
 * adoption; not a periodic read: requests while idle, and a window between reads. One GET per burst of
 * new NodeMaintenances, none while idle.
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound } from '../../clients/kube/errors.ts';
import type { KubeHttpClient } from '../../clients/kube/http/client.ts';
import {
  clusterObjectsPath,
  type InformerOptions,
  type Listed,
  ResilientInformer,
} from '../../clients/kube/http/informer.ts';
import { EVACUATION_API, type EvacuationObject, evacuationName } from '../../clients/kube/paths.ts';
import type { Logger } from '../../log/logger.ts';
import { LeadershipTerm } from '../term.ts';
import type { EventOutlet, ForwarderSource, PublishReceipt } from '../types.ts';
import { type NodeMaintenanceAction, planNodeMaintenance } from './decide.ts';
import { type FirstCounts, readFirstCounts } from './first-counts.ts';
import { emitObjectEvent, maintenanceSubject, nodeSubject } from './kube-events.ts';
import { NODE_LEASE_SECONDS } from './lease.ts';
import { leaseWanted } from './lease-gate.ts';
import { NMO_EVENT_MESSAGES } from './messages.ts';
import { nmoMarker } from './nmo.ts';
import { type LeaseOutcome, releaseNodeLease, requestNodeLease } from './node-lease.ts';
import { nodeNamedBy, servedNodeOf } from './served-node.ts';
import {
  DRAINBRIDGE_FINALIZER,
  MEDIK8S_FLAVOR,
  NMO_FINALIZER,
  type NodeMaintenance,
  type NodeMaintenanceFlavor,
  nodeMaintenanceRequestId,
  patchToWire,
  SERVED_NODE_ANNOTATION,
  statusFromWire,
} from './types.ts';

export interface NodeMaintenanceSourceOptions {
  readonly client: KubeHttpClient;
  readonly nodes: ResilientInformer<V1Node>;
  readonly informer: Pick<InformerOptions<NodeMaintenance>, 'client' | 'watchTimeoutSeconds' | 'backoff'>;
  readonly coexistence: 'refuse' | 'act';
  readonly logger: Logger;
  readonly onRestart?: (resource: string, reason: string) => void;
  readonly now?: () => Date;
  /** Which NodeMaintenance API (default: medik8s's). */
  readonly flavor?: NodeMaintenanceFlavor;
}

/** A NodeMaintenance whose node's Lease another holder has is asked again at most this long after. */
const LEASE_RETRY_MAX_MS = 10_000;
/** A failed reconcile (a Lease call, a patch) is tried again this long after, without waiting for a change. */
const RETRY_AFTER_FAILURE_MS = 5_000;
/** The Lease is renewed at half its duration while the maintenance lasts (NMO renews only on its reconciles). */
const LEASE_RENEW_MS = (NODE_LEASE_SECONDS * 1000) / 2;

export class NodeMaintenanceSource implements ForwarderSource {
  readonly name: string;
  readonly #o: NodeMaintenanceSourceOptions;
  readonly #flavor: NodeMaintenanceFlavor;
  readonly #maintenances: ResilientInformer<NodeMaintenance>;
  readonly #records: ResilientInformer<EvacuationObject>;
  #outlet: EventOutlet | undefined;
  readonly #term = new LeadershipTerm();
  #nmoInstalled: string | undefined;
  readonly #refused = new Set<string>();
  readonly #dirty = new Set<string>();
  #draining: Promise<void> | undefined;
  /** A later pass over a NodeMaintenance (the Lease retried or renewed), by name. */
  readonly #later = new Map<string, NodeJS.Timeout>();
  /** What taking the lead started (reading the CRD), awaited by stop(). */
  #leadWork: Promise<void> | undefined;

  constructor(options: NodeMaintenanceSourceOptions) {
    this.#o = options;
    this.#flavor = options.flavor ?? MEDIK8S_FLAVOR;
    this.name = this.#flavor.source;
    const common = { ...options.informer, logger: options.logger };
    const resource = this.#flavor.resource;
    this.#maintenances = new ResilientInformer<NodeMaintenance>({
      ...common,
      resource,
      path: clusterObjectsPath(this.#flavor.api),
      list: (paged) => this.#listMaintenances(paged),
      onRestart: (reason) => options.onRestart?.(resource, reason),
    });
    this.#records = new ResilientInformer<EvacuationObject>({
      ...common,
      resource: EVACUATION_API.plural,
      path: clusterObjectsPath(EVACUATION_API),
      onRestart: (reason) => options.onRestart?.(EVACUATION_API.plural, reason),
    });
  }

  get synced(): boolean {
    return this.#maintenances.synced && this.#records.synced;
  }

  async start(outlet: EventOutlet): Promise<void> {
    this.#outlet = outlet;
    this.#maintenances.subscribe({
      onChange: (_type, nm) => this.#mark(nm.metadata.name),
      onList: () => this.#markAll(),
    });
    this.#records.subscribe({
      onChange: (_type, record) => this.#mark(this.#byRequest(record.spec?.requestId)),
    });
    // Admission decisions read the nodes: the first full list of them decides every CR waiting for it.
    this.#o.nodes.subscribe({
      onChange: (_type, node) => this.#markNode(node.metadata?.name),
      onList: () => this.#markAll(),
    });
    this.#maintenances.start();
    this.#records.start();
  }

  lead(): void {
    this.#term.lead();
    this.#leadWork = this.#detectNmo().then(() => this.#markAll());
  }

  follow(): void {
    this.#term.follow();
    this.#refused.clear();
    this.#dirty.clear();
    this.#cancelLater();
  }

  #cancelLater(): void {
    for (const timer of this.#later.values()) clearTimeout(timer);
    this.#later.clear();
  }

  /** Marks `name` again after `ms` (replacing an earlier timer for it). */
  #markLater(name: string, ms: number): void {
    clearTimeout(this.#later.get(name));
    const timer = setTimeout(() => {
      this.#later.delete(name);
      this.#mark(name);
    }, ms);
    timer.unref();
    this.#later.set(name, timer);
  }

  receipt(receipt: PublishReceipt): void {
    this.#term.receipt(receipt);
  }

  /** Stops watching and acting; then waits for the work in flight (closing the client ends it at once). */
  async stop(): Promise<void> {
    this.#term.stop();
    this.#dirty.clear();
    this.#cancelLater();
    await Promise.all([this.#maintenances.stop(), this.#records.stop()]);
    await this.#leadWork;
    await this.#draining;
  }

  #crdMissingReported = false;

  /** Without the CRD there is nothing to watch: an empty list (the source counts as synced), retried with backoff. */
  async #listMaintenances(paged: () => Promise<Listed<NodeMaintenance>>): Promise<Listed<NodeMaintenance>> {
    try {
      const listed = await paged();
      this.#crdMissingReported = false;
      return listed;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (!this.#crdMissingReported) {
        this.#o.logger.warn('the NodeMaintenance CRD is not installed: NodeMaintenances are ignored until it is', {
          crd: this.#flavor.crd,
        });
        this.#crdMissingReported = true;
      }
      return { items: [], resourceVersion: '' };
    }
  }

  /** Reads the CRD for NMO's marks. Not found: no NMO; unreadable: the last answer stands (NMO's finalizer still counts per CR). */
  async #detectNmo(): Promise<void> {
    let marker: string | undefined;
    try {
      marker = nmoMarker(await this.#o.client.getCustomResourceDefinition(this.#flavor.crd));
    } catch (error) {
      if (!isNotFound(error)) {
        this.#o.logger.warn('could not read the NodeMaintenance CRD', { error: String(error) });
        return;
      }
    }
    if (marker === this.#nmoInstalled) return;
    this.#nmoInstalled = marker;
    if (marker)
      this.#o.logger.warn('node-maintenance-operator detected', { why: marker, coexistence: this.#o.coexistence });
    else this.#o.logger.info('node-maintenance-operator no longer detected', { crd: this.#flavor.crd });
  }

  /** A CR drainbridge has not decided about yet: neither adopted, nor NMO's, nor being deleted. */
  #undecided(nm: NodeMaintenance): boolean {
    const finalizers = nm.metadata.finalizers ?? [];
    return (
      !nm.metadata.deletionTimestamp &&
      !finalizers.includes(DRAINBRIDGE_FINALIZER) &&
      !finalizers.includes(NMO_FINALIZER) &&
      !this.#refused.has(nm.metadata.uid ?? '')
    );
  }

  /** NMO's presence decides about a CR not decided yet, and whether NMO's finalizer is released. */
  #dependsOnNmo(nm: NodeMaintenance, undecided: boolean): boolean {
    return undecided || (nm.metadata.finalizers?.includes(NMO_FINALIZER) ?? false);
  }

  #listsComplete(): boolean {
    return this.#o.nodes.synced && this.#maintenances.synced;
  }

  #byRequest(requestId: string | undefined): string | undefined {
    if (!requestId?.startsWith('nm.')) return undefined;
    return this.#maintenances.list().find((nm) => nodeMaintenanceRequestId(nm) === requestId)?.metadata.name;
  }

  #markNode(nodeName: string | undefined): void {
    for (const nm of this.#maintenances.list()) {
      if (nodeNamedBy(nm) === nodeName || nm.spec?.nodeName === nodeName) this.#mark(nm.metadata.name);
    }
  }

  #markAll(): void {
    for (const nm of this.#maintenances.list()) this.#mark(nm.metadata.name);
  }

  #mark(name: string | undefined): void {
    if (!name || !this.#term.leading) return;
    this.#dirty.add(name);
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
      if (this.#dirty.size > 0 && this.#term.leading) this.#mark([...this.#dirty][0]);
    });
  }

  async #drain(): Promise<void> {
    // NMO may have been installed since the lead was taken: read again before the first undecided CR.
    let nmoChecked = false;
    while (this.#term.leading && this.#dirty.size > 0) {
      const name = [...this.#dirty][0] as string;
      this.#dirty.delete(name);
      const nm = this.#maintenances.get(name);
      if (!nm) continue;
      try {
        const undecided = this.#undecided(nm);
        // "No such node" and "another one asks for it" are final: decided only on complete lists (the
        // first list of each marks every CR again).
        if (undecided && !this.#listsComplete()) continue;
        if (!nmoChecked && this.#dependsOnNmo(nm, undecided)) {
          nmoChecked = true;
          await this.#detectNmo();
        }
        await this.#reconcile(nm);
      } catch (error) {
        this.#o.logger.warn('NodeMaintenance reconcile failed; retried at the next change or re-list', {
          nodeMaintenance: name,
          error: error instanceof Error ? error.message : String(error),
        });
        this.#markLater(name, RETRY_AFTER_FAILURE_MS);
      }
    }
  }

  async #reconcile(nm: NodeMaintenance): Promise<void> {
    const requestId = nodeMaintenanceRequestId(nm);
    const servedNode = servedNodeOf(nm, () => this.#o.nodes.list());
    const now = this.#o.now?.() ?? new Date();
    const lease = await this.#requestLease(nm, servedNode, now);
    const record = this.#records.get(evacuationName(requestId));
    const firstCounts = await this.#firstCounts(nm, servedNode, record);
    const actions = planNodeMaintenance({
      nm: statusFromWire(this.#flavor, nm),
      node: this.#o.nodes.get(servedNode),
      servedNode,
      record,
      ...(firstCounts ? { firstCounts } : {}),
      others: this.#maintenances.list().filter((other) => other.metadata.uid !== nm.metadata.uid),
      nmoInstalled: this.#nmoInstalled,
      coexistence: this.#o.coexistence,
      ...(lease ? { lease } : {}),
      now,
    });
    for (const action of actions) await this.#act(nm, servedNode, action);
  }

  /**
   * NMO's pod counts for the first status: read while an adopted NodeMaintenance shows none and its
   * evacuation has no record yet. Unreadable (the pods list not granted): the status goes without them.
   */
  async #firstCounts(
    nm: NodeMaintenance,
    servedNode: string,
    record: EvacuationObject | undefined,
  ): Promise<FirstCounts | undefined> {
    const adopted = nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER) ?? false;
    const shown = statusFromWire(this.#flavor, nm).status?.totalpods !== undefined;
    if (!adopted || nm.metadata.deletionTimestamp || shown || record || !this.#o.nodes.get(servedNode))
      return undefined;
    try {
      return await readFirstCounts(this.#o.client, servedNode);
    } catch (error) {
      this.#o.logger.warn('could not count the pods on the node for the first status', {
        nodeMaintenance: nm.metadata.name,
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
  }

  /**
   * NMO's RequestLease, on every pass over an adopted NodeMaintenance in maintenance (not being deleted,
   * its node there, not failed on lease errors); the next pass is scheduled: a renewal, or a retry while
   * another holder has the Lease (at its expiry, or sooner for a release).
   */
  async #requestLease(nm: NodeMaintenance, servedNode: string, now: Date): Promise<LeaseOutcome | undefined> {
    const adopted = nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER) ?? false;
    const node = this.#o.nodes.get(servedNode);
    if (!adopted || nm.metadata.deletionTimestamp || !node || !leaseWanted(nm.status)) return undefined;
    const lease = await requestNodeLease(this.#o.client, node, now);
    const name = nm.metadata.name ?? '';
    if (lease.kind === 'taken') this.#markLater(name, LEASE_RENEW_MS);
    else if (lease.kind === 'held') {
      const untilExpiry = lease.until.getTime() - now.getTime() + 100;
      this.#markLater(name, Math.max(100, Math.min(untilExpiry, LEASE_RETRY_MAX_MS)));
      this.#o.logger.info('node Lease held by another medik8s component: the maintenance waits', {
        nodeMaintenance: name,
        holder: lease.holder,
        until: lease.until.toISOString(),
      });
    } else {
      this.#o.logger.warn('could not take the node Lease', { nodeMaintenance: name, error: lease.error });
      this.#markLater(name, RETRY_AFTER_FAILURE_MS);
    }
    return lease;
  }

  async #act(nm: NodeMaintenance, servedNode: string, action: NodeMaintenanceAction): Promise<void> {
    const name = nm.metadata.name ?? '';
    switch (action.kind) {
      case 'refuse':
        return this.#refuse(nm, action.reason);
      case 'add-finalizer':
        return this.#adopt(nm, action.node);
      case 'remove-finalizer':
        return this.#release(nm, servedNode, action.nmo === true);
      case 'nmo-marks-left':
        this.#o.logger.warn('NodeMaintenance left by node-maintenance-operator released', {
          nodeMaintenance: name,
          node: servedNode,
          repair: action.message,
        });
        await emitObjectEvent(this.#o.client, maintenanceSubject(this.#flavor, nm), {
          reason: 'NodeMaintenanceOperatorGone',
          message: action.message,
          type: 'Warning',
        });
        return;
      case 'event':
        return this.#event(nm, servedNode, action);
      case 'status':
        await this.#o.client.patchClusterObject(
          this.#flavor.api,
          name,
          { status: patchToWire(this.#flavor, action.patch) as never },
          'status',
        );
        return;
      case 'publish':
        return this.#publish(nm, servedNode, action.detailType);
    }
  }

  async #event(nm: NodeMaintenance, servedNode: string, action: Extract<NodeMaintenanceAction, { kind: 'event' }>) {
    const node = action.on === 'node' ? this.#o.nodes.get(servedNode) : undefined;
    if (action.on === 'node' && !node) return;
    const subject = node ? nodeSubject(node) : maintenanceSubject(this.#flavor, nm);
    await emitObjectEvent(this.#o.client, subject, action);
  }

  async #refuse(nm: NodeMaintenance, reason: string): Promise<void> {
    const uid = nm.metadata.uid ?? '';
    if (this.#refused.has(uid)) return;
    this.#refused.add(uid);
    const message = `${reason}; drainbridge leaves this NodeMaintenance alone (set DRAINBRIDGE_NMO_COEXISTENCE=act to handle it anyway)`;
    this.#o.logger.warn('NodeMaintenance refused: node-maintenance-operator acts on it', {
      nodeMaintenance: nm.metadata.name,
      reason,
    });
    await emitObjectEvent(this.#o.client, maintenanceSubject(this.#flavor, nm), {
      reason: 'NodeMaintenanceOperatorPresent',
      message,
      type: 'Warning',
    });
  }

  /**
   * The finalizer and the node taken, in one patch conditional on the version read: a concurrent change
   * to the list is never overwritten, and the node recorded is the nodeName the decision read.
   */
  async #adopt(nm: NodeMaintenance, node: string): Promise<void> {
    const finalizers = [
      ...(nm.metadata.finalizers ?? []).filter((f) => f !== DRAINBRIDGE_FINALIZER),
      DRAINBRIDGE_FINALIZER,
    ];
    await this.#o.client.patchClusterObject(this.#flavor.api, nm.metadata.name ?? '', {
      metadata: {
        resourceVersion: nm.metadata.resourceVersion ?? '',
        finalizers,
        annotations: { [SERVED_NODE_ANNOTATION]: node },
      },
    });
  }

  /** Removes drainbridge's finalizer (and, `nmo`, the one a node-maintenance-operator no longer there left). */
  async #release(nm: NodeMaintenance, servedNode: string, nmo: boolean): Promise<void> {
    // NMO's InvalidateLease before its finalizer goes: a failure keeps the finalizer (retried).
    if (nm.metadata.finalizers?.includes(DRAINBRIDGE_FINALIZER))
      await releaseNodeLease(this.#o.client, servedNode, this.#o.now?.() ?? new Date());
    clearTimeout(this.#later.get(nm.metadata.name ?? ''));
    const ours = (f: string) => f === DRAINBRIDGE_FINALIZER || (nmo && f === NMO_FINALIZER);
    const finalizers = (nm.metadata.finalizers ?? []).filter((f) => !ours(f));
    await this.#o.client.patchClusterObject(this.#flavor.api, nm.metadata.name ?? '', {
      metadata: { resourceVersion: nm.metadata.resourceVersion ?? '', finalizers },
    });
    this.#o.logger.info('maintenance ended; NodeMaintenance released', { nodeMaintenance: nm.metadata.name });
    await emitObjectEvent(this.#o.client, maintenanceSubject(this.#flavor, nm), {
      reason: 'RemovedMaintenance',
      message: NMO_EVENT_MESSAGES.RemovedMaintenance,
    });
  }

  async #publish(
    nm: NodeMaintenance,
    servedNode: string,
    detailType: 'Maintenance Requested' | 'Maintenance Ended',
  ): Promise<void> {
    const requestId = nodeMaintenanceRequestId(nm);
    if (!this.#term.offerOnce(detailType, requestId)) return;
    const name = nm.metadata.name ?? '';
    const base = {
      version: '1' as const,
      requestId,
      requester: `NodeMaintenance/${name}`,
      origin: 'node-maintenance' as const,
      target: { nodeName: servedNode },
    };
    const key = `node-maintenance/${nm.metadata.uid ?? name}`;
    this.#o.logger.info(
      detailType === 'Maintenance Requested'
        ? 'NodeMaintenance: evacuation requested'
        : 'NodeMaintenance deleted: maintenance ends',
      {
        nodeMaintenance: name,
        node: servedNode,
        requestId,
      },
    );
    if (detailType === 'Maintenance Requested') {
      const reason = nm.spec.reason || `NodeMaintenance ${name}`;
      // No `drain` of its own: NMO's drainer settings (Force, DeleteEmptyDirData, IgnoreAllDaemonSets) are the
      // node-maintenance origin's defaults (lib/model/drain-defaults.ts), so the operator's DRAINBRIDGE_DRAIN_*
      // and `run` flags can still change them; the forwarder's own flags ride on the event (drain-outlet).
      this.#outlet?.offer({ detailType, key, detail: { ...base, reason } });
    } else {
      this.#outlet?.offer({ detailType, key, detail: { ...base, reason: `NodeMaintenance ${name} deleted` } });
    }
  }
}
