/**
 * The workstation install is one command, `kubectl apply -k deploy/base` (the real kubectl against the
 * simulator): both CRDs (Evacuation, NodeMaintenance), the namespace and the RBAC, after which
 * `drainbridge check` passes and a NodeMaintenance can be created. deploy/ has no symlinked directory a
 * user could be told to apply (kubectl does not follow them). Where node-maintenance-operator already owns
 * the NodeMaintenance CRD, deploy/overlays/nmo-installed installs the rest and leaves NMO's CRD as it is.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { INSTALL_COMMAND, INSTALL_COMMAND_NMO } from '../../lib/preflight/index.ts';
import { type Simulator, startSimulator } from '../../sim/simulator.ts';
import { runCli } from '../cli/run-cli.ts';
import { findKubectl, Kubectl } from '../fidelity/kubectl-runner.ts';
import { waitUntil } from '../support/wait.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const NM_CRD = 'nodemaintenances.nodemaintenance.medik8s.io';
const binary = findKubectl();
const skip = binary ? false : 'no kubectl';

const nodeMaintenance =
  'apiVersion: nodemaintenance.medik8s.io/v1beta1\nkind: NodeMaintenance\nmetadata: { name: nm-1 }\nspec: { nodeName: node-1, reason: kernel }\n';

/** `kubectl apply -k deploy/base` → ['apply', '-k', '<checkout>/deploy/base']. */
const argsOf = (command: string): string[] => {
  const [, ...args] = command.split(' ');
  return args.map((arg) => (arg.startsWith('deploy/') ? join(ROOT, arg) : arg));
};

describe('deploy/ holds no symlinks', () => {
  it('git tracks no symlink under deploy/ (kubectl apply -f DIR does not follow one)', () => {
    const entries = execFileSync('git', ['ls-files', '-s', 'deploy'], { cwd: ROOT, encoding: 'utf8' });
    const links = entries.split('\n').filter((line) => line.startsWith('120000 '));
    assert.deepEqual(links, []);
  });
});

describe(`${INSTALL_COMMAND} on a cluster without drainbridge`, { skip }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-install-'));
  before(async () => {
    sim = await startSimulator({ scenario: 'small' });
    kubectl = new Kubectl(binary as string, sim.kubeconfig());
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs both CRDs, the namespace and the roles; check then passes and a NodeMaintenance is accepted', async () => {
    const before = await runCli(['check', '--kubeconfig', writeAdmin(dir, sim)]);
    assert.equal(before.code, 4, 'not ready before the install');
    assert.ok(before.stdout.includes(INSTALL_COMMAND), before.stdout);

    const applied = await kubectl.run(argsOf(INSTALL_COMMAND));
    assert.equal(applied.code, 0, applied.stderr);
    for (const object of [
      'customresourcedefinition.apiextensions.k8s.io/evacuations.drainbridge.io',
      `customresourcedefinition.apiextensions.k8s.io/${NM_CRD}`,
      'namespace/drainbridge',
      'clusterrole.rbac.authorization.k8s.io/drainbridge',
      'clusterrole.rbac.authorization.k8s.io/drainbridge-forwarder',
      'role.rbac.authorization.k8s.io/drainbridge-leases',
    ]) {
      assert.match(applied.stdout, new RegExp(`${object.replaceAll('.', '\\.')} (created|configured)`), object);
    }
    await waitUntil(
      'the NodeMaintenance of the README to be accepted',
      async () => (await kubectl.run(['apply', '-f', '-'], { input: nodeMaintenance })).code === 0,
      20_000,
    );
    const after = await runCli(['check', '--kubeconfig', writeAdmin(dir, sim)]);
    assert.equal(after.code, 0, after.stdout + after.stderr);
    assert.match(after.stdout, /^ready:/m);
  });
});

describe(`${INSTALL_COMMAND_NMO} where node-maintenance-operator owns the NodeMaintenance CRD`, { skip }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;
  before(async () => {
    sim = await startSimulator({ scenario: 'small' });
    kubectl = new Kubectl(binary as string, sim.kubeconfig());
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
  });

  it("installs the Evacuation CRD and the roles and leaves NMO's CRD untouched", async () => {
    const crd = parse(readFileSync(join(ROOT, 'deploy/base/crds/nodemaintenances.yaml'), 'utf8')) as {
      metadata: { labels?: Record<string, string> };
    };
    crd.metadata.labels = { 'app.kubernetes.io/name': 'node-maintenance-operator' };
    assert.equal((await kubectl.run(['create', '-f', '-'], { input: stringify(crd) })).code, 0);
    const before = await kubectl.run(['get', 'crd', NM_CRD, '-o', 'jsonpath={.metadata.resourceVersion}']);

    const applied = await kubectl.run(argsOf(INSTALL_COMMAND_NMO));
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(
      applied.stdout,
      /customresourcedefinition\.apiextensions\.k8s\.io\/evacuations\.drainbridge\.io created/,
    );
    assert.doesNotMatch(applied.stdout, /nodemaintenances/);
    const afterApply = await kubectl.run(['get', 'crd', NM_CRD, '-o', 'jsonpath={.metadata.resourceVersion}']);
    assert.equal(afterApply.stdout, before.stdout, "NMO's CRD was not written");
  });
});

function writeAdmin(dir: string, sim: Simulator): string {
  const path = join(dir, 'admin.kubeconfig');
  writeFileSync(path, sim.kubeconfig(), { mode: 0o600 });
  return path;
}
