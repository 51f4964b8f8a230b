/** Maps a resource request (verb, resource, subresource) to its handler. */
import { VIRTUAL_RESOURCES } from '../store/builtin-types.ts';
import { methodNotAllowed, StatusError } from '../store/status.ts';
import type { ResourceType } from '../store/types.ts';
import type { Handler } from './context.ts';
import { evictPod } from './handlers/eviction.ts';
import { getObject, listObjects } from './handlers/read.ts';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  subjectAccessReview,
} from './handlers/reviews.ts';
import { scaleWorkload } from './handlers/scale.ts';
import { bindPod, requestToken } from './handlers/subresources.ts';
import { watchObjects } from './handlers/watch.ts';
import { createObject, deleteCollection, deleteObject, patchObject, updateObject } from './handlers/write.ts';
import type { RequestInfo } from './request-info.ts';

/** The apiserver's answer for a path it does not serve. */
export function notServed(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

const MAIN: Readonly<Record<string, Handler>> = {
  get: getObject,
  list: listObjects,
  watch: watchObjects,
  create: createObject,
  update: updateObject,
  patch: patchObject,
  delete: deleteObject,
  deletecollection: deleteCollection,
};

const REVIEWS: Readonly<Record<string, Handler>> = {
  'authorization.k8s.io/selfsubjectaccessreviews': selfSubjectAccessReview,
  'authorization.k8s.io/subjectaccessreviews': subjectAccessReview,
  'authorization.k8s.io/selfsubjectrulesreviews': selfSubjectRulesReview,
  'authentication.k8s.io/selfsubjectreviews': selfSubjectReview,
};

const SUBRESOURCES: Readonly<Record<string, Readonly<Record<string, Handler>>>> = {
  eviction: { create: evictPod },
  binding: { create: bindPod },
  token: { create: requestToken },
  status: { get: getObject, update: updateObject, patch: patchObject },
  scale: { get: scaleWorkload, update: scaleWorkload, patch: scaleWorkload },
};

function unsupportedVerb(): StatusError {
  return methodNotAllowed(`the server does not allow this method on the requested resource`);
}

/** The handler for a resource request against `type`. */
export function routeResource(info: RequestInfo, type: ResourceType): Handler {
  const key = `${type.group}/${type.resource}`;
  if (VIRTUAL_RESOURCES.has(key)) {
    const review = REVIEWS[key];
    if (!review || info.verb !== 'create' || info.subresource) throw unsupportedVerb();
    return review;
  }
  if (info.subresource) {
    if (!type.subresources.includes(info.subresource)) throw notServed();
    const handler = SUBRESOURCES[info.subresource]?.[info.verb];
    if (!handler) throw unsupportedVerb();
    return handler;
  }
  const handler = MAIN[info.verb];
  if (!handler) throw unsupportedVerb();
  if (!type.namespaced && info.namespace && type.resource !== 'namespaces') throw notServed();
  return handler;
}
