/**
 * The CustomResourceDefinitions virt-operator installs for the four resources the simulator serves,
 * and the KubeVirt CR. Names, short names, categories, served versions (`v1` storage, `v1alpha3`
 * served) and printer columns follow
 * `pkg/virt-operator/resource/generate/components/crds.go`: the VMI and VM CRDs start with an Age
 * column, the migration CRD shows Phase and VMI only, and the VMI CRD has no status subresource
 * (virt-handler patches its status through the main resource).
 */
import type { KubeObject, ObjectStore, PrinterColumn } from '../../store/types.ts';
import { API_VERSION, GROUP, KV_REFS } from './api.ts';

const CRDS_REF = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
const NAMESPACES = { group: '', resource: 'namespaces' };

/** Where virt-operator runs and keeps the KubeVirt CR. */
export const KUBEVIRT_NAMESPACE = 'kubevirt';
export const KUBEVIRT_NAME = 'kubevirt';

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const PHASE: PrinterColumn = { name: 'Phase', type: 'string', jsonPath: '.status.phase' };
const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: ".status.conditions[?(@.type=='Ready')].status",
};

interface CrdShape {
  readonly plural: string;
  readonly kind: string;
  readonly shortNames: readonly string[];
  readonly columns: readonly PrinterColumn[];
  readonly status: boolean;
  readonly labels: Record<string, string>;
}

const SHAPES: readonly CrdShape[] = [
  {
    plural: 'virtualmachineinstances',
    kind: 'VirtualMachineInstance',
    shortNames: ['vmi', 'vmis'],
    columns: [
      AGE,
      PHASE,
      { name: 'IP', type: 'string', jsonPath: '.status.interfaces[0].ipAddress' },
      { name: 'NodeName', type: 'string', jsonPath: '.status.nodeName' },
      READY,
      {
        name: 'Live-Migratable',
        type: 'string',
        jsonPath: ".status.conditions[?(@.type=='LiveMigratable')].status",
        priority: 1,
      },
      { name: 'Paused', type: 'string', jsonPath: ".status.conditions[?(@.type=='Paused')].status", priority: 1 },
    ],
    status: false,
    labels: { 'kubevirt.io': '' },
  },
  {
    plural: 'virtualmachines',
    kind: 'VirtualMachine',
    shortNames: ['vm', 'vms'],
    columns: [
      AGE,
      { name: 'Status', description: 'Human Readable Status', type: 'string', jsonPath: '.status.printableStatus' },
      READY,
    ],
    status: true,
    labels: { 'kubevirt.io': '' },
  },
  {
    plural: 'virtualmachineinstancemigrations',
    kind: 'VirtualMachineInstanceMigration',
    shortNames: ['vmim', 'vmims'],
    columns: [
      { ...PHASE, description: 'The current phase of VM instance migration' },
      {
        name: 'VMI',
        type: 'string',
        jsonPath: '.spec.vmiName',
        description: 'The name of the VMI to perform the migration on',
      },
    ],
    status: true,
    labels: { 'kubevirt.io': '' },
  },
  {
    plural: 'kubevirts',
    kind: 'KubeVirt',
    shortNames: ['kv', 'kvs'],
    columns: [AGE, PHASE],
    status: true,
    labels: { 'operator.kubevirt.io': '' },
  },
];

function crdOf(shape: CrdShape): KubeObject {
  const version = (name: string, storage: boolean): Record<string, unknown> => ({
    name,
    served: true,
    storage,
    ...(shape.status ? { subresources: { status: {} } } : {}),
    additionalPrinterColumns: shape.columns,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${shape.plural}.${GROUP}`, labels: { ...shape.labels } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        plural: shape.plural,
        singular: shape.plural.slice(0, -1),
        kind: shape.kind,
        listKind: `${shape.kind}List`,
        shortNames: [...shape.shortNames],
        categories: ['all'],
      },
      versions: [version('v1', true), version('v1alpha3', false)],
    },
  };
}

/** The four CRD manifests, in creation order. */
export function kubeVirtCrds(): KubeObject[] {
  return SHAPES.map(crdOf);
}

/** The KubeVirt CR with `spec.configuration` as given, reported Deployed (virt-controller only reads deployed CRs). */
export function kubeVirtCr(configuration: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'KubeVirt',
    metadata: { name: KUBEVIRT_NAME, namespace: KUBEVIRT_NAMESPACE },
    spec: { certificateRotateStrategy: {}, configuration, workloadUpdateStrategy: {} },
    status: {
      phase: 'Deployed',
      conditions: [
        { type: 'Available', status: 'True', reason: 'AllComponentsReady', message: 'All components are ready.' },
      ],
      observedKubeVirtVersion: 'v1.5.0',
      targetKubeVirtVersion: 'v1.5.0',
    },
  };
}

/** The objects a scenario creates to install KubeVirt: namespace, CRDs, KubeVirt CR. */
export function kubeVirtInstallObjects(configuration: Record<string, unknown> = {}): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUBEVIRT_NAMESPACE } },
    ...kubeVirtCrds(),
    kubeVirtCr(configuration),
  ];
}

/** Installs what is missing of the CRDs and the KubeVirt CR (a scenario may have created them already). */
export function ensureKubeVirtInstalled(store: ObjectStore, configuration: Record<string, unknown> = {}): void {
  if (!store.get(NAMESPACES, undefined, KUBEVIRT_NAMESPACE)) {
    store.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUBEVIRT_NAMESPACE } });
  }
  for (const crd of kubeVirtCrds()) {
    if (!store.get(CRDS_REF, undefined, crd.metadata.name ?? '')) store.create(CRDS_REF, crd);
  }
  // The store keeps a created object's status, as virt-operator would have reported it.
  if (store.list(KV_REFS.kubevirts).items.length === 0) store.create(KV_REFS.kubevirts, kubeVirtCr(configuration));
}
