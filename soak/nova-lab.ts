/**
 * The real-Nova lab for `npm run soak -- --nova` (test/e2e/openstack/lab: Keystone, Placement and Nova 26
 * from Debian, fake virt driver, hosts compute-1..3): reached from its openrc, held with the e2e suite's
 * lock (two runs against one Nova would delete each other's servers), and the clouds.yaml drainbridge
 * gets, as an operator deploys it. Refuses at once, naming how to bring the lab up, when it is not there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import { loadOpenStackCredentials } from '../lib/clients/openstack/credentials.ts';
import { KeystoneSession } from '../lib/clients/openstack/keystone.ts';
import { NovaClient } from '../lib/clients/openstack/nova.ts';
import { PlacementClient } from '../lib/clients/openstack/placement.ts';
import { HOSTS, LAB_DIR, LAB_SCRIPT, type Lab } from '../test/e2e/openstack/support.ts';
import { NOVA_NODE_LABEL } from './cluster.ts';

/** How to bring the lab up, for every refusal (as root; `npm run test:e2e` does it too and leaves it running). */
export const LAB_UP = `bash ${relative(process.cwd(), LAB_SCRIPT)} up (as root; or npm run test:e2e, which leaves it running)`;

/** The cloud name in the clouds.yaml drainbridge gets (OS_CLOUD). */
const CLOUD = 'soak-lab';

/** The lab is not there, or not fit for a soak: the message says what and how to put it right. */
export class NovaLabUnavailable extends Error {
  override readonly name = 'NovaLabUnavailable';
}

/** The OS_* variables of the lab's openrc (as `source openrc` sets them). */
export function readOpenrc(labDir: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(labDir, 'openrc'), 'utf8');
  } catch {
    throw new NovaLabUnavailable(`--nova needs the real-Nova lab, and ${join(labDir, 'openrc')} is missing: ${LAB_UP}`);
  }
  const env: Record<string, string> = {};
  for (const match of text.matchAll(/^export (OS_[A-Z_]+)=(.*)$/gm)) env[match[1] as string] = match[2] as string;
  return env;
}

/** Whether Keystone answers at all (a plain GET, 3 s): a lab that is down is told at once, not after the clients' retries. */
export async function checkKeystoneAnswers(env: Record<string, string>, labDir: string): Promise<void> {
  const url = env.OS_AUTH_URL ?? '';
  try {
    await fetch(url, { signal: AbortSignal.timeout(3_000) });
  } catch (error) {
    const why = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new NovaLabUnavailable(
      `--nova needs the real-Nova lab (${labDir}), and its Keystone at ${url} does not answer (${why}): ${LAB_UP}`,
    );
  }
}

/** Clients on the lab as its admin (the openrc's credentials). */
export async function connectLab(env: Record<string, string>): Promise<Lab> {
  const credentials = await loadOpenStackCredentials({ env, resolveSecretRef: null });
  const session = new KeystoneSession({ credentials });
  return { session, credentials, nova: new NovaClient(session), placement: new PlacementClient(session) };
}

/**
 * Every lab compute must be up and enabled at the start: the soak judges who disables and enables them,
 * and leaves them as it found them. Answers host → service id.
 */
export async function checkComputes(lab: Lab): Promise<Map<string, string>> {
  const services = await lab.nova.listComputeServices();
  const ids = new Map<string, string>();
  for (const host of HOSTS) {
    const service = services.find((s) => s.host === host);
    if (!service) throw new NovaLabUnavailable(`the lab has no nova-compute on ${host}: ${LAB_UP}`);
    if (service.state !== 'up') {
      throw new NovaLabUnavailable(
        `nova-compute on ${host} is down: bash ${relative(process.cwd(), LAB_SCRIPT)} start nova-compute-${host.split('-')[1]}`,
      );
    }
    if (service.status !== 'enabled') {
      throw new NovaLabUnavailable(
        `nova-compute on ${host} is disabled ("${service.disabledReason ?? ''}"): the soak needs every lab compute enabled at its start, to tell who disables what — enable it (openstack compute service set --enable ${host} nova-compute, with the lab's openrc)`,
      );
    }
    ids.set(host, service.id);
  }
  return ids;
}

/**
 * Takes the lab's lock (the e2e suite's, test/e2e/openstack/run.sh: flock on `<lab>.lock`) for as long as
 * the returned process lives; refuses when another run holds it.
 */
export async function lockLab(labDir: string): Promise<ChildProcess> {
  const lock = `${labDir}.lock`;
  const holder = spawn('flock', ['-n', '-E', '75', lock, '-c', 'echo locked; exec cat'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const held = await new Promise<boolean>((resolve) => {
    holder.stdout?.once('data', () => resolve(true));
    holder.once('exit', () => resolve(false));
    holder.once('error', () => resolve(false));
  });
  if (!held) {
    throw new NovaLabUnavailable(
      `another run holds the Nova lab (${lock}, an e2e suite or a soak): wait for it; two runs against one Nova delete each other's servers`,
    );
  }
  return holder;
}

/** Releases the lock (its holder's `cat` reads end of input and exits). */
export function unlockLab(holder: ChildProcess): void {
  holder.stdin?.end();
}

const CLOUDS_KEYS: Record<string, string> = {
  OS_AUTH_URL: 'auth.auth_url',
  OS_USERNAME: 'auth.username',
  OS_PASSWORD: 'auth.password',
  OS_PROJECT_NAME: 'auth.project_name',
  OS_USER_DOMAIN_NAME: 'auth.user_domain_name',
  OS_PROJECT_DOMAIN_NAME: 'auth.project_domain_name',
  OS_REGION_NAME: 'region_name',
  OS_INTERFACE: 'interface',
};

/**
 * Writes the clouds.yaml an operator would mount from a Secret (mode 0600, in the soak's log directory)
 * and answers drainbridge's settings for it: Nova on, only the nodes labelled as compute nodes (each
 * naming its host with drainbridge.io/nova-host), credentials by OS_CLOUD.
 */
export function drainbridgeNovaEnv(openrc: Record<string, string>, dir: string): Record<string, string> {
  const cloud: Record<string, unknown> = {};
  for (const [variable, key] of Object.entries(CLOUDS_KEYS)) {
    const value = openrc[variable];
    if (value === undefined) continue;
    const [head, tail] = key.split('.') as [string, string | undefined];
    if (tail === undefined) cloud[head] = value;
    else cloud[head] = { ...(cloud[head] as Record<string, string> | undefined), [tail]: value };
  }
  const file = join(dir, 'clouds.yaml');
  writeFileSync(file, stringify({ clouds: { [CLOUD]: cloud } }), { mode: 0o600 });
  return {
    DRAINBRIDGE_NOVA: 'true',
    DRAINBRIDGE_NOVA_NODE_SELECTOR: `${NOVA_NODE_LABEL}=enabled`,
    OS_CLOUD: CLOUD,
    OS_CLIENT_CONFIG_FILE: file,
  };
}

export { LAB_DIR };
