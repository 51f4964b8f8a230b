/**
 * Mirror pods: the API objects a kubelet writes for the static pods it runs from files, so the API
 * shows them. kubectl drain recognises them by the `kubernetes.io/config.mirror` annotation and leaves
 * them alone; their controller owner is the Node.
 */
import type { KubeObject } from '../store/types.ts';
import { fnv32a } from './meta.ts';
import type { StaticPod } from './runtime.ts';
import type { Node } from './types.ts';

export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** The mirror pod the kubelet writes for a static pod: config annotations and the Node as owner. */
export function mirrorPodFor(staticPod: StaticPod, node: Node): KubeObject {
  const hash = fnv32a(JSON.stringify(staticPod)).toString(16);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${staticPod.name}-${node.metadata.name}`,
      namespace: staticPod.namespace ?? 'kube-system',
      labels: { ...staticPod.labels },
      annotations: {
        ...staticPod.annotations,
        [MIRROR_ANNOTATION]: hash,
        'kubernetes.io/config.hash': hash,
        'kubernetes.io/config.source': 'file',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid ?? '', controller: true },
      ],
    },
    spec: { ...structuredClone(staticPod.spec), nodeName: node.metadata.name },
  };
}
