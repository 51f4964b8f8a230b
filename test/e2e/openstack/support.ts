/**
 * Helpers of the real-Nova e2e suite: lab credentials, booting servers on a chosen host, service
 * switches, and a driver that calls a reconcile pass the way the workflow does (again at once when it
 * progressed, after a short backoff when it did not). The lab is brought up by run.sh (lab/lab.sh).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { loadOpenStackCredentials, type OpenStackCredentials } from '../../../lib/clients/openstack/credentials.ts';
import { KeystoneSession } from '../../../lib/clients/openstack/keystone.ts';
import { NovaClient, type NovaServer } from '../../../lib/clients/openstack/nova.ts';
import { PlacementClient } from '../../../lib/clients/openstack/placement.ts';
import type { PassResult, ReconcilePass } from '../../../lib/model/pass.ts';
import type { ResolvedRequest } from '../../../lib/model/request.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';
import { waitUntil } from '../../support/wait.ts';

export const LAB_DIR = process.env.NOVALAB ?? join(process.env.TMPDIR ?? tmpdir(), 'drainbridge-novalab');
export const LAB_SCRIPT = new URL('./lab/lab.sh', import.meta.url).pathname;
export const HOSTS = ['compute-1', 'compute-2', 'compute-3'];
const MICROVERSION = { 'OpenStack-API-Version': 'compute 2.88' };

/** The lab's admin credentials, read from its openrc as an operator would source it. */
export async function labCredentials(): Promise<OpenStackCredentials> {
  const text = await readFile(join(LAB_DIR, 'openrc'), 'utf8');
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) env[match[1] as string] = match[2] as string;
  return loadOpenStackCredentials({ env });
}

export interface Lab {
  readonly session: KeystoneSession;
  readonly nova: NovaClient;
  readonly placement: PlacementClient;
  readonly credentials: OpenStackCredentials;
}

export async function connect(): Promise<Lab> {
  const credentials = await labCredentials();
  const session = new KeystoneSession({ credentials });
  return { session, nova: new NovaClient(session), placement: new PlacementClient(session), credentials };
}

/** A raw compute call for test set-up (booting, deleting, stopping servers). */
export async function compute<T>(lab: Lab, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) {
  const response = await lab.session.request<T>({ service: 'compute', method, path, headers: MICROVERSION, body });
  return response.data;
}

/**
 * The body that boots one m1.tiny server forced onto `host` (admin `nova:host` zone syntax). The lab has
 * no image service: the server boots from a blank local disk.
 */
export function serverOnHost(name: string, host: string) {
  return {
    server: {
      name,
      flavorRef: '1',
      networks: 'none',
      availability_zone: `nova:${host}`,
      block_device_mapping_v2: [
        { boot_index: 0, source_type: 'blank', destination_type: 'local', volume_size: 1, delete_on_termination: true },
      ],
    },
  };
}

/** Boots `count` servers forced onto `host` (admin `nova:host` zone syntax) and waits until all are ACTIVE. */
export async function bootServers(lab: Lab, host: string, count: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const created = await compute<{ server: { id: string } }>(
      lab,
      'POST',
      '/servers',
      serverOnHost(`${prefix}-${String(i).padStart(2, '0')}`, host),
    );
    ids.push(created.server.id);
  }
  for (const id of ids) await waitForStatus(lab, id, 'ACTIVE');
  return ids;
}

export async function waitForStatus(lab: Lab, id: string, status: string, seconds = 90): Promise<NovaServer> {
  return waitUntil(
    `server ${id} ${status}`,
    async () => {
      const server = await lab.nova.getServer(id);
      if (server?.status === 'ERROR' && status !== 'ERROR') throw new Error(`server ${id} went to ERROR`);
      return server?.status === status && server.taskState === null ? server : undefined;
    },
    seconds * 1000,
    { everyMs: 500 },
  );
}

/** Deletes every server of every project and waits until they are gone. */
export async function deleteAllServers(lab: Lab): Promise<void> {
  const { servers } = await compute<{ servers: { id: string }[] }>(lab, 'GET', '/servers?all_tenants=1');
  for (const server of servers) await compute(lab, 'DELETE', `/servers/${server.id}`);
  await waitUntil(
    'all servers deleted',
    async () => {
      const left = await compute<{ servers: unknown[] }>(lab, 'GET', '/servers?all_tenants=1');
      return left.servers.length === 0;
    },
    120_000,
    { everyMs: 500 },
  );
}

export async function setServiceEnabled(
  lab: Lab,
  host: string,
  enabled: boolean,
  reason = 'e2e set-up',
): Promise<void> {
  const [service] = await lab.nova.listComputeServices(host);
  if (!service) throw new Error(`no service on ${host}`);
  if (enabled) await lab.nova.enableService(service.id);
  else await lab.nova.disableService(service.id, reason);
}

/** Runs lab.sh with arguments (stop/start one daemon). */
export async function labCtl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [LAB_SCRIPT, ...args], {
    env: { ...process.env, NOVALAB: LAB_DIR },
  });
  return stdout;
}

export function request(requestId: string, nodeName: string): ResolvedRequest {
  return {
    requestId,
    requester: 'e2e',
    origin: 'manual',
    target: { nodeName },
    nodeName,
    reason: 'e2e maintenance',
    drain: KUBECTL_DRAIN_DEFAULTS,
  };
}

export interface DriveOutcome {
  readonly result: PassResult;
  readonly passes: number;
  readonly seconds: number;
}

/**
 * Calls the pass until it is done, or until it stands still with only blockers left. Backoff when a
 * pass did not progress: 0.5 s doubling to 2 s (the workflow uses Step Functions Retry for this).
 */
export async function drive(
  pass: ReconcilePass,
  req: ResolvedRequest,
  options: { maxSeconds?: number; afterPass?: (result: PassResult, n: number) => Promise<void> | void } = {},
): Promise<DriveOutcome> {
  const started = Date.now();
  const startedAt = new Date().toISOString();
  let backoff = 500;
  for (let passes = 1; ; passes++) {
    const result = await pass.run({ request: req, now: new Date(), startedAt });
    await options.afterPass?.(result, passes);
    const seconds = (Date.now() - started) / 1000;
    if (result.done) return { result, passes, seconds };
    const stuck = !result.progressed && result.progress.inFlight === 0 && result.blockers.length > 0;
    if (stuck) return { result, passes, seconds };
    if (seconds > (options.maxSeconds ?? 300)) throw new Error(`evacuation not done after ${seconds}s`);
    if (result.progressed) backoff = 500;
    else {
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 2000);
    }
  }
}

/** Live migrations from `host` that have not ended, as Nova reports them. */
export async function migrationsInFlightFrom(lab: Lab, host: string, serverIds: readonly string[]): Promise<number> {
  const { migrations } = await compute<{
    migrations: { status: string; instance_uuid: string; source_compute: string }[];
  }>(lab, 'GET', `/os-migrations?migration_type=live-migration&source_compute=${host}`);
  const ended = new Set(['completed', 'error', 'failed', 'cancelled', 'done']);
  return migrations.filter((m) => serverIds.includes(m.instance_uuid) && !ended.has(m.status)).length;
}
