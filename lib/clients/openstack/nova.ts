/**
 * Nova (compute API v2.1) for host evacuation: microversion negotiation, compute services, the
 * servers of one host, live and cold migration, migration tracking, abort and force-complete, and
 * instance-action events for failure reasons. Every call names the server it concerns when it fails.
 */
import { EvacuationFailed } from '../../errors/index.ts';
import { OpenStackHttpError } from './http.ts';
import type { KeystoneSession, ServiceRequest } from './keystone.ts';

/** Service UUIDs in `/os-services` (and `PUT /os-services/{uuid}`) need 2.53. */
export const MIN_MICROVERSION = '2.53';
/** Instance-action events carry `details` (the fault of a failed step) from 2.84. */
export const EVENT_DETAILS_MICROVERSION = '2.84';
/** The newest microversion whose response shapes this client was checked against (Nova 26). */
export const MAX_MICROVERSION = '2.88';

export interface NovaService {
  readonly id: string;
  readonly host: string;
  readonly zone: string;
  readonly status: 'enabled' | 'disabled';
  readonly state: 'up' | 'down';
  readonly disabledReason: string | null;
  readonly forcedDown: boolean;
}

export interface NovaServer {
  readonly id: string;
  readonly name: string;
  /** ACTIVE, PAUSED, SHUTOFF, ERROR, MIGRATING, VERIFY_RESIZE, SHELVED_OFFLOADED, … */
  readonly status: string;
  /** `OS-EXT-SRV-ATTR:host`: the compute host the server is on (admin only). */
  readonly host: string | null;
  /** `OS-EXT-STS:task_state`: `migrating` while a live migration runs, null when idle. */
  readonly taskState: string | null;
  readonly flavor?: { readonly vcpus?: number; readonly ram?: number; readonly disk?: number };
}

export interface NovaMigration {
  readonly id: number;
  readonly status: string;
  readonly sourceCompute: string | null;
  readonly destCompute: string | null;
  readonly migrationType: string;
}

export interface NovaHypervisor {
  /** Compute node UUID (= Placement resource provider UUID). */
  readonly id: string;
  readonly hostname: string;
  /** The compute service host the hypervisor belongs to. */
  readonly host: string;
  readonly state: string;
  readonly status: string;
}

export interface InstanceActionEvent {
  readonly event: string;
  readonly result: string | null;
  readonly details: string | null;
}

/** A Nova action that Nova refused or failed, naming the server and Nova's reason. */
export class NovaActionError extends OpenStackHttpError {
  readonly serverId: string;
  constructor(what: string, serverId: string, cause: OpenStackHttpError) {
    super({
      method: cause.method,
      url: cause.url,
      ...(cause.status === undefined ? {} : { status: cause.status }),
      fault: `${what} of server ${serverId} failed: ${cause.fault ?? cause.code ?? 'no reason given'}`,
    });
    this.name = 'NovaActionError';
    this.serverId = serverId;
  }
}

/** Compares dotted microversions numerically ("2.9" < "2.53"). */
export function compareMicroversions(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = a.split('.').map(Number);
  const [bMajor = 0, bMinor = 0] = b.split('.').map(Number);
  return aMajor - bMajor || aMinor - bMinor;
}

/** The microversion to use given the endpoint's range; throws when the endpoint is too old. */
export function chooseMicroversion(range: { min: string; max: string }): string {
  if (compareMicroversions(range.max, MIN_MICROVERSION) < 0) {
    throw new EvacuationFailed(
      `Nova supports microversions up to ${range.max}; drainbridge needs at least ${MIN_MICROVERSION} (service UUIDs)`,
    );
  }
  return compareMicroversions(range.max, MAX_MICROVERSION) < 0 ? range.max : MAX_MICROVERSION;
}

type Json = Record<string, unknown>;
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toServer(raw: Json): NovaServer {
  return {
    id: String(raw.id),
    name: String(raw.name ?? ''),
    status: String(raw.status ?? 'UNKNOWN'),
    host: str(raw['OS-EXT-SRV-ATTR:host']),
    taskState: str(raw['OS-EXT-STS:task_state']),
    ...(raw.flavor && typeof raw.flavor === 'object' ? { flavor: raw.flavor as NovaServer['flavor'] } : {}),
  };
}

function toService(raw: Json): NovaService {
  return {
    id: String(raw.id),
    host: String(raw.host),
    zone: String(raw.zone ?? ''),
    status: raw.status === 'disabled' ? 'disabled' : 'enabled',
    state: raw.state === 'down' ? 'down' : 'up',
    disabledReason: str(raw.disabled_reason),
    forcedDown: raw.forced_down === true,
  };
}

function toMigration(raw: Json): NovaMigration {
  return {
    id: Number(raw.id),
    status: String(raw.status),
    sourceCompute: str(raw.source_compute),
    destCompute: str(raw.dest_compute),
    migrationType: String(raw.migration_type ?? 'live-migration'),
  };
}

const PAGE_SIZE = 200;

/** The Nova client; one per Keystone session. */
export class NovaClient {
  readonly #session: KeystoneSession;
  #microversion: Promise<string> | undefined;

  constructor(session: KeystoneSession) {
    this.#session = session;
  }

  /** The negotiated microversion (read once from the endpoint's version document). */
  microversion(): Promise<string> {
    this.#microversion ??= this.#negotiate().catch((error: unknown) => {
      this.#microversion = undefined;
      throw error;
    });
    return this.#microversion;
  }

  async #negotiate(): Promise<string> {
    const doc = await this.#session.request<{ version?: { version?: string; min_version?: string } }>({
      service: 'compute',
      method: 'GET',
      path: '/',
    });
    const version = doc.data.version;
    // An endpoint without microversions (a v2.0-only cloud) answers with an empty version string.
    return chooseMicroversion({ min: version?.min_version || '2.1', max: version?.version || '2.1' });
  }

  async #call<T>(request: Omit<ServiceRequest, 'service'>): Promise<T> {
    const microversion = await this.microversion();
    const response = await this.#session.request<T>({
      ...request,
      service: 'compute',
      headers: { 'OpenStack-API-Version': `compute ${microversion}`, ...request.headers },
    });
    return response.data;
  }

  async #action(serverId: string, what: string, body: Json): Promise<void> {
    try {
      await this.#call({ method: 'POST', path: `/servers/${serverId}/action`, body, idempotent: false });
    } catch (error) {
      if (error instanceof OpenStackHttpError) throw new NovaActionError(what, serverId, error);
      throw error;
    }
  }

  /** The nova-compute services, optionally of one host (exact match). */
  async listComputeServices(host?: string): Promise<NovaService[]> {
    const query = host ? `&host=${encodeURIComponent(host)}` : '';
    const data = await this.#call<{ services: Json[] }>({
      method: 'GET',
      path: `/os-services?binary=nova-compute${query}`,
    });
    return data.services.map(toService).filter((s) => host === undefined || s.host === host);
  }

  /** Disables a compute service with a reason (Nova keeps it in `disabled_reason`, max 255 chars). */
  async disableService(serviceId: string, reason: string): Promise<NovaService> {
    const data = await this.#call<{ service: Json }>({
      method: 'PUT',
      path: `/os-services/${serviceId}`,
      body: { status: 'disabled', disabled_reason: reason.slice(0, 255) },
    });
    return toService(data.service);
  }

  async enableService(serviceId: string): Promise<NovaService> {
    const data = await this.#call<{ service: Json }>({
      method: 'PUT',
      path: `/os-services/${serviceId}`,
      body: { status: 'enabled' },
    });
    return toService(data.service);
  }

  /**
   * Every server on a compute host, all projects, all pages. Refuses to answer when the host
   * attribute is not visible: without admin rights Nova silently ignores `host=` and would hand back
   * servers from anywhere.
   */
  async listServersOnHost(host: string): Promise<NovaServer[]> {
    const servers: NovaServer[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = `&limit=${PAGE_SIZE}${marker ? `&marker=${marker}` : ''}`;
      const data = await this.#call<{ servers: Json[] }>({
        method: 'GET',
        path: `/servers/detail?all_tenants=1&host=${encodeURIComponent(host)}${page}`,
      });
      for (const raw of data.servers) {
        if (!('OS-EXT-SRV-ATTR:host' in raw)) {
          throw new EvacuationFailed(
            "Nova does not show servers' host (OS-EXT-SRV-ATTR:host): the credentials lack admin rights, and the host filter would be ignored",
          );
        }
      }
      servers.push(...data.servers.map(toServer));
      if (data.servers.length < PAGE_SIZE) break;
      marker = servers.at(-1)?.id;
    }
    return servers.filter((s) => s.host === host);
  }

  /**
   * Hypervisors with the host of their compute service. From 2.53 a hypervisor's id is the compute
   * node UUID, which is also its Placement resource provider UUID.
   */
  async listHypervisors(): Promise<NovaHypervisor[]> {
    const data = await this.#call<{ hypervisors: Json[] }>({ method: 'GET', path: '/os-hypervisors/detail' });
    return data.hypervisors.map((raw) => ({
      id: String(raw.id),
      hostname: String(raw.hypervisor_hostname),
      host: str((raw.service as Json | undefined)?.host) ?? String(raw.hypervisor_hostname),
      state: String(raw.state),
      status: String(raw.status),
    }));
  }

  /** One server, or undefined when it no longer exists. */
  async getServer(serverId: string): Promise<NovaServer | undefined> {
    try {
      const data = await this.#call<{ server: Json }>({ method: 'GET', path: `/servers/${serverId}` });
      return toServer(data.server);
    } catch (error) {
      if (error instanceof OpenStackHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Starts a live migration; the scheduler picks the destination. Returns at the 202. */
  liveMigrate(serverId: string): Promise<void> {
    return this.#action(serverId, 'live migration', { 'os-migrateLive': { host: null, block_migration: 'auto' } });
  }

  /** Starts a cold migration (the server must be SHUTOFF or ACTIVE); it ends in VERIFY_RESIZE. */
  coldMigrate(serverId: string): Promise<void> {
    return this.#action(serverId, 'cold migration', { migrate: null });
  }

  confirmResize(serverId: string): Promise<void> {
    return this.#action(serverId, 'confirming the migration', { confirmResize: null });
  }

  /** Migration records of a server of one type (`live-migration` or `migration`), oldest first. */
  async listMigrations(serverId: string, type: 'live-migration' | 'migration'): Promise<NovaMigration[]> {
    const data = await this.#call<{ migrations: Json[] }>({
      method: 'GET',
      path: `/os-migrations?instance_uuid=${serverId}&migration_type=${type}`,
    });
    return data.migrations.map(toMigration).sort((a, b) => a.id - b.id);
  }

  /** Aborts a running (or, from 2.65, queued/preparing) live migration; it ends `cancelled`. */
  async abortMigration(serverId: string, migrationId: number): Promise<void> {
    try {
      await this.#call({ method: 'DELETE', path: `/servers/${serverId}/migrations/${migrationId}`, idempotent: false });
    } catch (error) {
      if (error instanceof OpenStackHttpError)
        throw new NovaActionError(`aborting migration ${migrationId}`, serverId, error);
      throw error;
    }
  }

  /** Pauses the guest so that a running live migration can finish. */
  async forceCompleteMigration(serverId: string, migrationId: number): Promise<void> {
    try {
      await this.#call({
        method: 'POST',
        path: `/servers/${serverId}/migrations/${migrationId}/action`,
        body: { force_complete: null },
        idempotent: false,
      });
    } catch (error) {
      if (error instanceof OpenStackHttpError)
        throw new NovaActionError(`force-completing migration ${migrationId}`, serverId, error);
      throw error;
    }
  }

  /**
   * Why the newest action of a kind failed, from its events: the `details` of failed events (2.84+),
   * else the names of the failed events. Undefined when nothing failed.
   */
  async lastActionFailure(serverId: string, action: string): Promise<string | undefined> {
    const list = await this.#call<{ instanceActions: Json[] }>({
      method: 'GET',
      path: `/servers/${serverId}/os-instance-actions`,
    });
    const latest = list.instanceActions.find((a) => a.action === action);
    if (!latest) return undefined;
    const detail = await this.#call<{ instanceAction: { events?: Json[]; message?: unknown } }>({
      method: 'GET',
      path: `/servers/${serverId}/os-instance-actions/${String(latest.request_id)}`,
    });
    const failed = (detail.instanceAction.events ?? [])
      .map((e): InstanceActionEvent => ({ event: String(e.event), result: str(e.result), details: str(e.details) }))
      .filter((e) => e.result === 'Error');
    if (failed.length === 0) return str(detail.instanceAction.message) ?? undefined;
    return failed.map((e) => e.details ?? `${e.event} failed`).join('; ');
  }
}
