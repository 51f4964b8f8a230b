import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { BRANCH_REGISTRY } from '../../../lib/branches/registry.ts';
import {
  type AslBranch,
  checkStates,
  generateEvacuateAsl,
  renderBranchStates,
  statePrefix,
} from '../../../scripts/asl-branches.ts';

const ASL = readFileSync(new URL('../../../state-machines/evacuate.asl.yml', import.meta.url), 'utf8');

interface State {
  Type: string;
  Next?: string;
  Parameters?: { branch?: string };
  Branches?: { StartAt: string; States: Record<string, State> }[];
}
type Machine = { StartAt: string; States: Record<string, State> };

describe('the Evacuate branch states follow the branch registry', () => {
  it('the committed definition is what the registry generates (`npm run asl`)', () => {
    assert.equal(generateEvacuateAsl(ASL, BRANCH_REGISTRY), ASL);
  });

  it('parallel branches run in the Parallel state in registry order, after-vms ones after it', () => {
    const machine = parse(ASL) as Machine;
    const parallel = machine.States.Evacuate?.Branches?.map((b) => b.States[b.StartAt]?.Parameters?.branch);
    assert.deepEqual(
      parallel,
      BRANCH_REGISTRY.filter((b) => b.stage === 'parallel').map((b) => b.name),
    );
    assert.equal(machine.States.Evacuate?.Next, 'CountEvacuate');
    assert.equal(machine.States.CountEvacuate?.Next, 'AfterEvacuate');
    assert.equal((machine.States.AfterEvacuate as unknown as { Default: string }).Default, 'InfraPodsPass');
    assert.equal(machine.States.InfraPodsPass?.Parameters?.branch, 'infra-pods');
  });

  it('another parallel branch is one more Parallel branch with its own state names, counted in the tally', () => {
    const branches: AslBranch[] = [...BRANCH_REGISTRY, { name: 'storage', stage: 'parallel' }];
    const machine = parse(generateEvacuateAsl(ASL, branches)) as Machine;
    const evacuate = machine.States.Evacuate as Machine['States'][string] & { ResultSelector: Record<string, string> };
    assert.equal(evacuate?.Branches?.length, 4);
    const fourth = evacuate?.Branches?.[3];
    assert.deepEqual(Object.keys(fourth?.States ?? {}), [
      'StoragePass',
      'StorageWaited',
      'StorageCounted',
      'StorageDone',
      'StorageFinished',
      'StorageLeaves',
    ]);
    assert.equal(fourth?.States.StoragePass?.Parameters?.branch, 'storage');
    assert.match(evacuate.ResultSelector['events.$'] ?? '', /\$\[3\]\.events/);
    assert.match(evacuate.ResultSelector['continue.$'] ?? '', /\$\[3\]\.continue/);
    assert.deepEqual(checkStates(machine), []);
  });

  it('two after-vms branches run one after the other, then FinishEvacuation', () => {
    const branches: AslBranch[] = [
      { name: 'pods', stage: 'parallel' },
      { name: 'infra-pods', stage: 'after-vms' },
      { name: 'late', stage: 'after-vms' },
    ];
    const machine = parse(generateEvacuateAsl(ASL, branches)) as Machine;
    assert.equal((machine.States.AfterEvacuate as unknown as { Default: string }).Default, 'InfraPodsPass');
    const done = machine.States.InfraPodsDone as unknown as { Choices: { Next: string }[] };
    assert.equal(done.Choices[0]?.Next, 'LatePass');
    const lateDone = machine.States.LateDone as unknown as { Choices: { Next: string }[] };
    assert.equal(lateDone.Choices[0]?.Next, 'FinishEvacuation');
  });

  it('refuses a registry that would reuse a state name, or has no parallel branch', () => {
    const clash: AslBranch[] = [...BRANCH_REGISTRY, { name: 'infra_pods', stage: 'after-vms' }];
    assert.equal(statePrefix('infra_pods'), statePrefix('infra-pods'));
    assert.throws(() => generateEvacuateAsl(ASL, clash), /branches infra-pods and infra_pods would both have states/);
    // A hand-written state of the same name elsewhere in the machine is caught too.
    const machine = parse(generateEvacuateAsl(ASL, BRANCH_REGISTRY)) as Machine;
    const pods = machine.States.Evacuate?.Branches?.[0];
    if (pods) pods.States.Admit = { Type: 'Succeed' };
    assert.match(checkStates(machine).join('\n'), /state name Admit is used twice/);
    assert.throws(() => renderBranchStates([{ name: 'pods', stage: 'after-vms' }]), /no parallel branch/);
  });

  it('refuses a definition without its marker lines', () => {
    assert.throws(() => generateEvacuateAsl('StartAt: A\nStates: {}\n', BRANCH_REGISTRY), /marker lines are missing/);
  });
});
