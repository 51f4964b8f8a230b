/**
 * The real-Nova lab as the Nova benchmark uses it: credentials from the lab's openrc (as an operator
 * would source them), booting servers forced onto one host, waiting for Nova, deleting servers. Its
 * own small copy of what the e2e suite does, so that the benchmark does not depend on test code.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOpenStackCredentials } from '../../lib/clients/openstack/credentials.ts';
import { KeystoneSession } from '../../lib/clients/openstack/keystone.ts';
import { NovaClient } from '../../lib/clients/openstack/nova.ts';
import { serverOnHost } from '../../test/e2e/openstack/support.ts';
import { waitUntil } from '../../test/support/wait.ts';

/** Where `test/e2e/openstack/lab/lab.sh` keeps its state (same default as the lab). */
export const LAB_DIR = process.env.NOVALAB ?? join(process.env.TMPDIR ?? tmpdir(), 'drainbridge-novalab');
const MICROVERSION = { 'OpenStack-API-Version': 'compute 2.88' };

/** Nova's default for `[DEFAULT] max_concurrent_live_migrations` (nova/conf/compute.py). */
const NOVA_DEFAULT_MAX_CONCURRENT_LIVE_MIGRATIONS = 1;

/**
 * `max_concurrent_live_migrations` as the lab's nova-compute configuration sets it (the smallest over its
 * config files; Nova's default 1 where none sets it). 0 means unlimited in Nova; read as 1 serial slot less
 * than nothing would be wrong, so it is returned as the number of servers' worth: the caller caps it.
 */
export function maxConcurrentLiveMigrations(): number {
  const dir = join(LAB_DIR, 'etc', 'nova');
  if (!existsSync(dir)) return NOVA_DEFAULT_MAX_CONCURRENT_LIVE_MIGRATIONS;
  const values = readdirSync(dir)
    .filter((file) => file.endsWith('.conf'))
    .flatMap((file) => [
      ...readFileSync(join(dir, file), 'utf8').matchAll(/^max_concurrent_live_migrations\s*=\s*(\d+)/gm),
    ])
    .map((match) => Number(match[1]))
    .map((value) => (value === 0 ? 20 : value));
  return values.length > 0 ? Math.min(...values) : NOVA_DEFAULT_MAX_CONCURRENT_LIVE_MIGRATIONS;
}

/** A connection to the lab as its admin. */
export interface NovaLab {
  readonly session: KeystoneSession;
  readonly nova: NovaClient;
  /** The lab's OS_* variables, for the `nova` command line client. */
  readonly osEnv: Record<string, string>;
}

/** The OS_* exports of the lab's openrc. */
async function readOpenrc(): Promise<Record<string, string>> {
  const text = await readFile(join(LAB_DIR, 'openrc'), 'utf8');
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) {
    env[match[1] as string] = (match[2] as string).replace(/^(['"])(.*)\1$/, '$2');
  }
  return env;
}

/** Connects to the lab; throws naming what is missing when it is not up. */
export async function connectLab(): Promise<NovaLab> {
  if (!existsSync(join(LAB_DIR, 'openrc'))) {
    throw new Error(`no lab at ${LAB_DIR} (no openrc): start it with test/e2e/openstack/lab/lab.sh up (root)`);
  }
  const osEnv = await readOpenrc();
  const session = new KeystoneSession({ credentials: await loadOpenStackCredentials({ env: osEnv }) });
  const nova = new NovaClient(session);
  await nova.listComputeServices(); // fails fast when Keystone or nova-api is down
  return { session, nova, osEnv };
}

/** A raw compute API call (set-up and the reference tool's progress). */
export async function compute<T>(
  lab: NovaLab,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await lab.session.request<T>({ service: 'compute', method, path, headers: MICROVERSION, body });
  return response.data;
}

/** Boots `count` m1.tiny servers forced onto `host` and waits until every one is ACTIVE and idle. */
export async function bootServers(lab: NovaLab, host: string, count: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `${BENCH_SERVER_PREFIX}${prefix}-${String(i).padStart(2, '0')}`;
    const created = await compute<{ server: { id: string } }>(lab, 'POST', '/servers', serverOnHost(name, host));
    ids.push(created.server.id);
  }
  await waitUntil(
    `${count} servers ACTIVE on ${host}`,
    async () => {
      const servers = await Promise.all(ids.map((id) => lab.nova.getServer(id)));
      if (servers.some((s) => s?.status === 'ERROR')) throw new Error(`a server booted on ${host} went to ERROR`);
      return servers.every((s) => s?.status === 'ACTIVE' && s.taskState === null) ? true : undefined;
    },
    180_000,
    { everyMs: 500 },
  );
  return ids;
}

/** Names of the servers the benchmark boots; it deletes only these. */
export const BENCH_SERVER_PREFIX = 'drainbridge-bench-';

interface ServerSummary {
  readonly id: string;
  readonly name: string;
}

async function listAllServers(lab: NovaLab): Promise<ServerSummary[]> {
  const { servers } = await compute<{ servers: ServerSummary[] }>(lab, 'GET', '/servers?all_tenants=1');
  return servers;
}

/**
 * Why the lab cannot be used now, or undefined when it can: servers the benchmark did not boot (the e2e
 * suite or someone else is using it) or a disabled nova-compute service. The benchmark evacuates whole
 * hosts and disables them, so it never runs next to other work.
 */
export async function labBusyReason(lab: NovaLab): Promise<string | undefined> {
  const foreign = (await listAllServers(lab)).filter((s) => !s.name.startsWith(BENCH_SERVER_PREFIX));
  if (foreign.length > 0)
    return `${foreign.length} server(s) not booted by the benchmark exist (e.g. ${foreign[0]?.name})`;
  const disabled = (await lab.nova.listComputeServices()).filter((s) => s.status !== 'enabled');
  if (disabled.length > 0) return `nova-compute on ${disabled.map((s) => s.host).join(', ')} is disabled`;
  return undefined;
}

/** Deletes the benchmark's own servers (by name prefix) and waits until they are gone; leaves others alone. */
export async function deleteBenchServers(lab: NovaLab): Promise<void> {
  const mine = (await listAllServers(lab)).filter((s) => s.name.startsWith(BENCH_SERVER_PREFIX));
  for (const server of mine) await compute(lab, 'DELETE', `/servers/${server.id}`);
  await waitUntil(
    'the benchmark servers deleted',
    async () => ((await listAllServers(lab)).some((s) => s.name.startsWith(BENCH_SERVER_PREFIX)) ? undefined : true),
    180_000,
    { everyMs: 500 },
  );
}

/** Whether every server in `ids` is ACTIVE, idle and on a host other than `source`. */
export async function allMovedOff(lab: NovaLab, ids: readonly string[], source: string): Promise<boolean> {
  const servers = await Promise.all(ids.map((id) => lab.nova.getServer(id)));
  return servers.every((s) => s?.status === 'ACTIVE' && s.taskState === null && s.host !== null && s.host !== source);
}
