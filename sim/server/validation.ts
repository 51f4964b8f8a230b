/**
 * The few checks the apiserver makes on request bodies that clients notice: the body's apiVersion and
 * kind match the URL, and a pod names its containers and their images. Everything else is stored as
 * sent (see README: no schema validation).
 */
import { badRequest, invalid, type StatusCause } from '../store/status.ts';
import type { KubeObject, ResourceType } from '../store/types.ts';

/** 400 when the body's apiVersion or kind is set and differs from what the URL serves. */
export function checkTypeMeta(object: KubeObject, type: ResourceType, version: string): void {
  const expected = type.group ? `${type.group}/${version}` : version;
  if (object.apiVersion && object.apiVersion !== expected) {
    throw badRequest(
      `the API version in the data (${object.apiVersion}) does not match the expected API version (${expected})`,
    );
  }
  if (object.kind && object.kind !== type.kind) {
    throw badRequest(`the kind in the data (${object.kind}) does not match the expected kind (${type.kind})`);
  }
}

interface Container {
  name?: unknown;
  image?: unknown;
}

function containerCauses(containers: unknown, field: string): StatusCause[] {
  if (!Array.isArray(containers)) return [];
  const causes: StatusCause[] = [];
  containers.forEach((raw: Container, index) => {
    if (typeof raw?.name !== 'string' || raw.name === '') {
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${field}[${index}].name` });
    }
    if (typeof raw?.image !== 'string' || raw.image === '') {
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${field}[${index}].image` });
    }
  });
  return causes;
}

/** 422 for a pod without containers, or with a container missing its name or image. */
export function checkPod(object: KubeObject): void {
  const spec = (object.spec ?? {}) as { containers?: unknown; initContainers?: unknown };
  const causes: StatusCause[] = [];
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' });
  }
  causes.push(...containerCauses(spec.containers, 'spec.containers'));
  causes.push(...containerCauses(spec.initContainers, 'spec.initContainers'));
  if (causes.length > 0) throw invalid({ group: '', kind: 'Pod' }, object.metadata.name ?? '', causes);
}
