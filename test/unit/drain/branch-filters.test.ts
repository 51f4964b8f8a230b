import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { infraPodFilter, launcherPodFilter, podBranchFilters } from '../../../lib/branches/pods/branch-filters.ts';
import {
  type FilterContext,
  filterPod,
  KUBECTL_FILTERS,
  MESSAGES,
  makeFilters,
} from '../../../lib/branches/pods/filters.ts';
import { drainRefusedMessage, selectPods } from '../../../lib/branches/pods/selection.ts';
import { parseSelector } from '../../../lib/clients/kube/selectors.ts';
import { KUBECTL_DRAIN_DEFAULTS } from '../../../lib/model/request.ts';
import { NOW, pod } from './fixtures.ts';

const context: FilterContext = { options: KUBECTL_DRAIN_DEFAULTS, now: NOW, daemonSetExists: () => true };
const LAUNCHER = { 'kubevirt.io': 'virt-launcher' };
const INFRA = parseSelector('app=nova-compute');

describe("drainbridge's pod filters", () => {
  test('a launcher pod is handed to the VM branch; any other pod passes on', () => {
    const launcher = pod({ name: 'virt-launcher-vm1', owner: 'VirtualMachineInstance', labels: LAUNCHER });
    assert.equal(launcherPodFilter(launcher, context).handOff, 'vm-branch');
    assert.equal(launcherPodFilter(launcher, context).delete, false);
    assert.equal(launcherPodFilter(pod({ name: 'web', owner: 'ReplicaSet' }), context).delete, true);
  });

  test('each pod branch keeps its own pods and hands the others over', () => {
    const infra = pod({ name: 'nova', owner: 'StatefulSet', labels: { app: 'nova-compute' } });
    const web = pod({ name: 'web', owner: 'ReplicaSet' });
    assert.equal(infraPodFilter('pods', INFRA)(infra, context).handOff, 'other-pod-branch');
    assert.equal(infraPodFilter('pods', INFRA)(web, context).delete, true);
    assert.equal(infraPodFilter('infra-pods', INFRA)(infra, context).delete, true);
    assert.equal(infraPodFilter('infra-pods', INFRA)(web, context).handOff, 'other-pod-branch');
    // No selector: every pod is the pods branch's, none the infra branch's.
    assert.equal(infraPodFilter('pods', [])(infra, context).delete, true);
    assert.equal(infraPodFilter('infra-pods', [])(infra, context).handOff, 'other-pod-branch');
  });

  test("they run before kubectl's: a launcher pod with emptyDir is the VM branch's, not an emptyDir refusal", () => {
    const launcher = pod({ name: 'vm', owner: 'VirtualMachineInstance', labels: LAUNCHER, emptyDir: true });
    assert.equal(filterPod(launcher, context).message, MESSAGES.localStorageFatal, "kubectl's filters alone refuse it");
    const chain = makeFilters(podBranchFilters('pods', INFRA));
    assert.deepEqual(chain.slice(2), KUBECTL_FILTERS);
    assert.equal(filterPod(launcher, context, chain).handOff, 'vm-branch');
    const selection = selectPods([launcher], { ...context, branch: 'pods', infraPodSelector: '' });
    assert.deepEqual(selection.refusals, []);
    assert.deepEqual(
      selection.launcherPods.map((p) => p.metadata?.name),
      ['vm'],
    );
  });

  test("an infra pod without a controller is refused by the infra branch only (it is not the pods branch's to refuse)", () => {
    const bare = pod({ name: 'agent', labels: { app: 'nova-compute' } });
    const pods = selectPods([bare], { ...context, branch: 'pods', infraPodSelector: 'app=nova-compute' });
    assert.deepEqual(pods.refusals, []);
    assert.deepEqual(
      pods.heldBack.map((p) => p.metadata?.name),
      ['agent'],
    );
    const infra = selectPods([bare], { ...context, branch: 'infra-pods', infraPodSelector: 'app=nova-compute' });
    assert.deepEqual(
      infra.refusals.map((r) => r.code),
      ['BarePod'],
    );
  });
});

describe('a refused drain fails at once, as kubectl drain (issue 25)', () => {
  const infraContext = { ...context, infraPodSelector: 'app=nova-compute' };
  const bareInfra = pod({ name: 'nova-debug', labels: { app: 'nova-compute' } });
  const web = pod({ name: 'web', owner: 'ReplicaSet' });

  test("the pods branch of an evacuation also refuses for the infra branch's pods (refuseForHeldBack)", () => {
    const evacuating = selectPods([web, bareInfra], { ...infraContext, branch: 'pods', refuseForHeldBack: true });
    assert.deepEqual(
      evacuating.refusals.map((r) => [r.code, r.line]),
      [['BarePod', `${MESSAGES.unmanagedFatal}: default/nova-debug`]],
    );
    assert.deepEqual(
      evacuating.heldBack.map((p) => p.metadata?.name),
      ['nova-debug'],
      'still the infra branch’s pod to move',
    );
    // A plan reports each refusal under its own branch only.
    const planned = selectPods([web, bareInfra], { ...infraContext, branch: 'pods' });
    assert.deepEqual(planned.refusals, []);
  });

  test("kubectl's failure sentence: one error as it is, several in brackets", () => {
    const two = selectPods([bareInfra, pod({ name: 'shell' })], { ...context, branch: 'pods', infraPodSelector: '' });
    assert.equal(
      drainRefusedMessage('node-a', two.refusals),
      `unable to drain node "node-a" due to error: ${MESSAGES.unmanagedFatal}: default/nova-debug, default/shell`,
    );
    const emptyDir = { ...web, spec: { containers: [], volumes: [{ name: 'scratch', emptyDir: {} }] } };
    const both = selectPods([bareInfra, emptyDir], { ...context, branch: 'pods', infraPodSelector: '' });
    assert.match(
      drainRefusedMessage('node-a', both.refusals),
      /^unable to drain node "node-a" due to error: \[cannot delete .+: default\/\S+, cannot delete .+: default\/\S+\]$/,
    );
  });
});
