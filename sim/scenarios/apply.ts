/**
 * Creates a loaded scenario's objects in a store, and starts the control loops with the scenario's
 * timings and static pods. Every kind and owner reference is checked before the first write, so a
 * scenario that cannot apply changes nothing.
 */
import { type FieldProblem, InvalidInput } from '../../lib/errors/index.ts';
import { type ControllerOptions, type Controllers, startControllers } from '../controllers/index.ts';
import { StatusError } from '../store/status.ts';
import type { KubeObject, ObjectStore, OwnerReference, ResourceRef } from '../store/types.ts';
import type { Scenario } from './load.ts';

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

const identity = (kind: string, namespace: string | undefined, name: string | undefined): string =>
  `${kind} ${namespace ?? ''}/${name ?? ''}`;

interface Known {
  /** `group kind` → whether namespaced, for built-in kinds and the scenario's CRDs. */
  readonly kinds: Map<string, { ref: ResourceRef; namespaced: boolean }>;
}

function knownKinds(store: ObjectStore, scenario: Scenario): Known {
  const kinds = new Map<string, { ref: ResourceRef; namespaced: boolean }>();
  for (const type of store.registry.all()) {
    kinds.set(`${type.group} ${type.kind}`, {
      ref: { group: type.group, resource: type.resource },
      namespaced: type.namespaced,
    });
  }
  for (const crd of scenario.objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
    const spec = (crd.spec ?? {}) as { group?: string; scope?: string; names?: { kind?: string; plural?: string } };
    const ref = { group: spec.group ?? '', resource: spec.names?.plural ?? '' };
    kinds.set(`${spec.group} ${spec.names?.kind}`, { ref, namespaced: spec.scope !== 'Cluster' });
  }
  return { kinds };
}

function describe(object: KubeObject, index: number): string {
  return `objects[${index}] (${object.kind} ${object.metadata.name})`;
}

/** Every problem that would stop the scenario from applying: unknown kinds, owners not defined earlier. */
function preflight(store: ObjectStore, scenario: Scenario): FieldProblem[] {
  const { kinds } = knownKinds(store, scenario);
  const earlier = new Set<string>();
  const problems: FieldProblem[] = [];
  scenario.objects.forEach((object, index) => {
    const kind = kinds.get(`${groupOf(object.apiVersion)} ${object.kind}`);
    if (!kind)
      problems.push({
        path: `${describe(object, index)}.kind`,
        message: `no resource of kind ${object.kind} in ${object.apiVersion}`,
      });
    const namespace = kind?.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    for (const owner of object.metadata.ownerReferences ?? []) {
      if (owner.uid || earlier.has(identity(owner.kind, namespace, owner.name))) continue;
      const message = `owner ${owner.kind} ${owner.name} is not defined earlier in the scenario`;
      problems.push({ path: `${describe(object, index)}.metadata.ownerReferences`, message });
    }
    earlier.add(identity(object.kind, namespace, object.metadata.name));
  });
  return problems;
}

function resolveOwners(
  object: KubeObject,
  uids: ReadonlyMap<string, string>,
  namespace: string | undefined,
): KubeObject {
  const refs = object.metadata.ownerReferences;
  if (!refs) return object;
  const resolved: OwnerReference[] = refs.map((ref) =>
    ref.uid ? ref : { ...ref, uid: uids.get(identity(ref.kind, namespace, ref.name)) ?? '' },
  );
  return { ...object, metadata: { ...object.metadata, ownerReferences: resolved } };
}

/** What applying created. */
export interface AppliedScenario {
  /** The stored objects, in creation order (system namespaces that already existed are left out). */
  readonly created: readonly KubeObject[];
}

/**
 * Creates the scenario's objects. An `InvalidInput` before any write when a kind is unknown or an owner
 * is missing; a store refusal (a 422 from its own validation) is rethrown with the object named.
 */
export function applyScenario(store: ObjectStore, scenario: Scenario): AppliedScenario {
  const problems = preflight(store, scenario);
  if (problems.length > 0) throw new InvalidInput(`scenario ${scenario.source}`, problems);
  const { kinds } = knownKinds(store, scenario);
  const uids = new Map<string, string>();
  const created: KubeObject[] = [];
  scenario.objects.forEach((object, index) => {
    const kind = kinds.get(`${groupOf(object.apiVersion)} ${object.kind}`);
    if (!kind) return;
    const namespace = kind.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    const toCreate = resolveOwners(
      namespace ? { ...object, metadata: { ...object.metadata, namespace } } : object,
      uids,
      namespace,
    );
    try {
      const stored = store.create(kind.ref, toCreate);
      uids.set(identity(object.kind, namespace, object.metadata.name), stored.metadata.uid ?? '');
      created.push(stored);
    } catch (error) {
      if (error instanceof StatusError && error.code === 409 && object.kind === 'Namespace') return;
      throw new InvalidInput(`scenario ${scenario.source}`, [
        { path: describe(object, index), message: (error as Error).message },
      ]);
    }
  });
  return { created };
}

/** The control-loop options a scenario implies (timings, static pods); `overrides` win. */
export function controllerOptionsFor(scenario: Scenario, overrides: ControllerOptions = {}): ControllerOptions {
  return {
    podStartupDelayMs: scenario.podStartupDelayMs,
    jobPodRunMs: scenario.jobPodRunMs,
    staticPods: scenario.staticPods,
    ...(scenario.kubevirt ? { kubevirt: scenario.kubevirt } : {}),
    ...overrides,
  };
}

/** Applies the scenario and starts the control loops on it: what `drainbridge sim` needs. */
export function startScenario(store: ObjectStore, scenario: Scenario, overrides: ControllerOptions = {}): Controllers {
  applyScenario(store, scenario);
  return startControllers(store, controllerOptionsFor(scenario, overrides));
}
