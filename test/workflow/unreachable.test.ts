/**
 * Issue 12, item 3: an unreachable cluster. Connection refused, an unknown host or a TLS certificate that
 * does not match on the first call is a clear error within seconds (it used to retry for a minute and end
 * in a raw ECONNREFUSED); in-cluster access outside a cluster and a plain-HTTP server say what to set.
 * The CLI runs as a user runs it; nothing reaches the cluster, so nothing can be written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { renderKubeconfig } from '../../sim/kubeconfig.ts';
import { generateServingCertificate } from '../../sim/tls.ts';
import { assertCleanError } from '../support/clean-error.ts';
import { drainbridge } from '../support/cli.ts';
import { assertNoWrites } from '../support/request-log.ts';

/** "Within seconds": the old behaviour took over 60 s; the new one answers on the first refusal. */
const PROMPT_MS = 10_000;

describe('issue 12 item 3: an unreachable cluster is a clear error within seconds', () => {
  let sim: Simulator;
  let dir: string;
  const kubeconfig = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  before(async () => {
    sim = await startSimulator({ scenario: 'small', speed: 50 });
    dir = mkdtempSync(join(tmpdir(), 'drainbridge-unreachable-'));
  });
  after(async () => {
    await sim?.stop();
  });

  const cases = [
    {
      name: 'connection refused',
      config: () => renderKubeconfig('https://127.0.0.1:1', 'token', sim.caPem),
      names: ['https://127.0.0.1:1', 'connection refused', 'kubeconfig'],
    },
    {
      name: 'DNS failure',
      config: () => renderKubeconfig('https://no-such-host.invalid:6443', 'token', sim.caPem),
      names: ['no-such-host.invalid', 'does not resolve'],
    },
    {
      name: 'TLS mismatch (the kubeconfig of another cluster)',
      config: () => renderKubeconfig(sim.url, sim.adminToken, generateServingCertificate()?.cert),
      names: ['TLS certificate is not trusted', 'fetch a fresh kubeconfig'],
    },
  ];
  for (const command of [
    ['evacuate', 'node-1', '--ignore-daemonsets'],
    ['restore', 'node-1'],
    ['abort', 'node-1'],
    ['plan', 'node-1'],
  ]) {
    for (const c of cases) {
      it(`issue 12 item 3: ${command[0]} with ${c.name}`, async () => {
        const mark = sim.requestLog.mark();
        const path = kubeconfig(`${command[0]}-${c.name.split(' ')[0]}`, c.config());
        const result = await drainbridge([...command, '--kubeconfig', path]);
        assert.equal(result.code, 4, result.stdout); // not ready: the cluster cannot be reached
        assert.ok(result.ms < PROMPT_MS, `answered in ${result.ms} ms (expected under ${PROMPT_MS})`);
        const names = c.name.startsWith('TLS') ? [...c.names, sim.url] : c.names;
        assertCleanError(result.stderr, names, `${command[0]}: ${c.name}`);
        assertNoWrites(sim, mark, c.name);
      });
    }
  }

  it('issue 12 item 3: DRAINBRIDGE_KUBE_ACCESS=in-cluster outside a cluster says so', async () => {
    const result = await drainbridge(['plan', 'node-1'], {
      env: { DRAINBRIDGE_KUBE_ACCESS: 'in-cluster', KUBERNETES_SERVICE_HOST: undefined, KUBECONFIG: undefined },
    });
    assert.equal(result.code, 2, 'a usage error: the environment is wrong, nothing was changed');
    assertCleanError(result.stderr, [
      'DRAINBRIDGE_KUBE_ACCESS',
      'does not run in one',
      'KUBERNETES_SERVICE_HOST is not set',
      'DRAINBRIDGE_KUBE_ACCESS=kubeconfig',
    ]);
    assert.doesNotMatch(result.stderr, /Invalid URL/);
  });

  it('issue 12 item 3: an http:// server says what to set', async () => {
    const path = kubeconfig('http', renderKubeconfig(sim.url.replace('https://', 'http://'), sim.adminToken));
    const result = await drainbridge(['evacuate', 'node-1', '--kubeconfig', path]);
    assert.equal(result.code, 2, 'a usage error: the kubeconfig is wrong, nothing was changed');
    assert.ok(result.ms < PROMPT_MS);
    assertCleanError(result.stderr, ['KUBECONFIG', 'plain HTTP', 'https://', 'insecure-skip-tls-verify: true']);
    const token = await drainbridge(['plan', 'node-1'], {
      env: {
        DRAINBRIDGE_KUBE_ACCESS: 'token',
        DRAINBRIDGE_KUBE_SERVER: 'http://127.0.0.1:8080',
        DRAINBRIDGE_KUBE_TOKEN: 'x',
        KUBECONFIG: undefined,
      },
    });
    assert.equal(token.code, 2);
    assertCleanError(token.stderr, ['DRAINBRIDGE_KUBE_SERVER', 'plain HTTP', 'https:// address']);
  });
});
