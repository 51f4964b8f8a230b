/**
 * The Nova branch's preflight check (its definition's `preflight`, asked by lib/preflight through the
 * branch registry when DRAINBRIDGE_NOVA=true): the credentials load, Keystone issues a token
 * with a compute endpoint in its catalog, Nova lists its nova-compute services — the call the
 * workflow needs before it disables one — and Placement lists its resource providers (the prepare checks
 * the other hosts' room there, as `plan` does, before it disables the service). A single attempt, bounded in time: the question is whether
 * Nova answers now, not whether it would after retries.
 */

import { loadOpenStackCredentials } from '../../clients/openstack/credentials.ts';
import { OpenStackHttpError } from '../../clients/openstack/http.ts';
import { KeystoneSession } from '../../clients/openstack/keystone.ts';
import { NovaClient } from '../../clients/openstack/nova.ts';
import { PlacementClient } from '../../clients/openstack/placement.ts';
import { ConfigError } from '../../errors/index.ts';
import { connectionWords } from '../../util/connection-words.ts';
import type { BranchCheckResult } from '../contract/branch.ts';

const NOVA_TIMEOUT_MS = 15_000;

function timeout(ms: number): Promise<never> {
  return new Promise((_, reject) => {
    setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms).unref();
  });
}

interface Answers {
  readonly services: number;
  readonly providers: number;
}

async function listServices(env: Readonly<Record<string, string | undefined>>): Promise<Answers> {
  const credentials = await loadOpenStackCredentials({ env });
  const session = new KeystoneSession({
    credentials,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0, isRetryable: () => false },
  });
  const services = (await new NovaClient(session).listComputeServices()).length;
  const providers = (await new PlacementClient(session).listProviders()).length;
  return { services, providers };
}

/** The failure in words: a credentials problem as it is, an unanswered call by where and why. */
function reasonOf(error: unknown): string {
  if (error instanceof OpenStackHttpError && error.status === undefined) {
    return `${error.method} ${error.url}: ${connectionWords(error.code, error.message)}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ');
}

export async function checkNova(env: Readonly<Record<string, string | undefined>>): Promise<BranchCheckResult> {
  try {
    const answers = await Promise.race([listServices(env), timeout(NOVA_TIMEOUT_MS)]);
    const what = `Nova answers (${answers.services} nova-compute services; Placement ${answers.providers} resource providers)`;
    return { check: 'nova', ok: true, what };
  } catch (error) {
    // A credentials problem is ours to fix before Nova is even asked: blaming Nova would send the
    // operator to the wrong place.
    if (error instanceof ConfigError) {
      const what = `the OpenStack credentials cannot be loaded: ${error.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`;
      return {
        check: 'nova',
        ok: false,
        what,
        fix: 'correct the OS_* variables or the clouds.yaml entry named by OS_CLOUD',
      };
    }
    const fix =
      'check OS_AUTH_URL and that Keystone, Nova and Placement are up (openstack compute service list; openstack resource provider list)';
    return { check: 'nova', ok: false, what: `Nova does not answer: ${reasonOf(error)}`, fix };
  }
}
