/** Capacity check from Placement numbers (pure). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCapacity, freeCapacity } from '../../../lib/branches/nova/capacity.ts';
import type { ProviderCapacity } from '../../../lib/clients/openstack/placement.ts';

const host = (
  name: string,
  memory: { total: number; reserved: number; ratio: number; used: number },
): ProviderCapacity => ({
  provider: { uuid: `uuid-${name}`, name },
  generation: 1,
  inventories: {
    MEMORY_MB: { total: memory.total, reserved: memory.reserved, allocationRatio: memory.ratio, maxUnit: memory.total },
    VCPU: { total: 8, reserved: 0, allocationRatio: 4, maxUnit: 8 },
  },
  usages: { MEMORY_MB: memory.used, VCPU: 0 },
});
const vm = (id: string, mb: number, vcpu = 1) => ({ id, name: id, resources: { MEMORY_MB: mb, VCPU: vcpu } });

test('free = (total - reserved) x ratio - used', () => {
  assert.deepEqual(freeCapacity(host('a', { total: 8192, reserved: 512, ratio: 1.5, used: 1024 })), {
    MEMORY_MB: 10496,
    VCPU: 32,
  });
});

test('fits when the largest first land on the roomiest hosts', () => {
  const verdict = checkCapacity(
    [vm('s1', 2048), vm('s2', 4096), vm('s3', 2048)],
    [
      host('a', { total: 4096, reserved: 0, ratio: 1, used: 0 }),
      host('b', { total: 4096, reserved: 0, ratio: 1, used: 0 }),
    ],
  );
  assert.equal(verdict.fits, true);
});

test('reserved memory leaves no room: every server is named', () => {
  const verdict = checkCapacity(
    [vm('s1', 512), vm('s2', 512)],
    [host('a', { total: 8192, reserved: 8000, ratio: 1.5, used: 0 })],
  );
  assert.equal(verdict.fits, false);
  assert.deepEqual(verdict.unplaced.map((d) => d.id).sort(), ['s1', 's2']);
  assert.deepEqual(verdict.freeBefore, { a: { MEMORY_MB: 288, VCPU: 32 } });
});

test('total room is not enough when no single host holds a server', () => {
  const verdict = checkCapacity(
    [vm('big', 3000)],
    [
      host('a', { total: 2048, reserved: 0, ratio: 1, used: 0 }),
      host('b', { total: 2048, reserved: 0, ratio: 1, used: 0 }),
    ],
  );
  assert.deepEqual(
    verdict.unplaced.map((d) => d.id),
    ['big'],
  );
});

test('a resource class a target lacks does not fit there; no targets, nothing fits', () => {
  const needsGpu = { id: 'g', name: 'g', resources: { MEMORY_MB: 1, VGPU: 1 } };
  assert.equal(checkCapacity([needsGpu], [host('a', { total: 4096, reserved: 0, ratio: 1, used: 0 })]).fits, false);
  assert.equal(checkCapacity([vm('x', 1)], []).fits, false);
  assert.equal(checkCapacity([], []).fits, true);
});
