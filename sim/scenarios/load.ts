/**
 * Reads a scenario (a bundled name such as `small`, or a YAML file path), validates it, and turns it
 * into the objects to create, in dependency order. Pure apart from reading the file; a bad scenario is
 * an `InvalidInput` naming every bad field, before anything is created.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { problemsOf, safeParseReporting } from '../../lib/bus/contracts/parse.ts';
import { selectorMatches } from '../../lib/clients/kube/selectors.ts';
import { type FieldProblem, InvalidInput } from '../../lib/errors/index.ts';
import { type KubeVirtOptions, type KubeVirtTimings, kubeVirtInstallObjects } from '../controllers/kubevirt/index.ts';
import type { StaticPod } from '../controllers/runtime.ts';
import type { KubeObject } from '../store/types.ts';
import type { KubevirtSection } from './kubevirt-schema.ts';
import { type ScenarioFile, type ScenarioManifest, type ScenarioNode, scenarioSchema } from './schema.ts';

/** A validated scenario, ready for `applyScenario`. Times are simulated milliseconds. */
export interface Scenario {
  readonly name: string;
  readonly description?: string;
  /** Where it came from (file path). */
  readonly source: string;
  /** Default clock speed (1 = real time) when the caller gives none. */
  readonly speed: number;
  readonly podStartupDelayMs: number;
  readonly jobPodRunMs: number;
  /** Objects to create, in order: namespaces, nodes, CRDs, custom resources, workloads, PDBs, pods. */
  readonly objects: readonly KubeObject[];
  /** Static pods by node name, for the kubelets. */
  readonly staticPods: Readonly<Record<string, readonly StaticPod[]>>;
  /** The simulated KubeVirt's configuration and timings, when the scenario has a `kubevirt:` section. */
  readonly kubevirt?: KubeVirtOptions;
}

/** The folder holding the bundled scenarios (this one). */
export const SCENARIO_DIR = import.meta.dirname;

/** Names of the bundled scenarios. */
export function bundledScenarios(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort();
}

function resolvePath(nameOrFile: string): string {
  if (/^[a-z0-9-]+$/.test(nameOrFile)) {
    const bundled = join(SCENARIO_DIR, `${nameOrFile}.yaml`);
    if (existsSync(bundled)) return bundled;
  }
  if (existsSync(nameOrFile)) return nameOrFile;
  throw new InvalidInput('scenario', [
    {
      path: 'scenario',
      message: `"${nameOrFile}" is neither a bundled scenario (${bundledScenarios().join(', ')}) nor a file`,
    },
  ]);
}

/** Loads a bundled scenario by name, or a scenario file by path. */
export function loadScenario(nameOrFile: string): Scenario {
  const path = resolvePath(nameOrFile);
  return parseScenario(readFileSync(path, 'utf8'), path);
}

/** Parses and validates scenario YAML. `source` names the file in error messages. */
export function parseScenario(text: string, source = 'scenario'): Scenario {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new InvalidInput(`scenario ${source}`, [
      { path: '', message: `not valid YAML: ${(error as Error).message}` },
    ]);
  }
  // Reporting the input lets problemsOf say "is required" for a missing field, not "received undefined".
  const result = safeParseReporting(scenarioSchema, raw);
  if (!result.success) {
    // A scenario file has no contract versions: an unknown field is simply not one the simulator reads.
    const problems = problemsOf(result.error).map((p) =>
      p.message.startsWith('unknown field') ? { ...p, message: 'unknown field' } : p,
    );
    throw new InvalidInput(`scenario ${source}`, problems);
  }
  const problems = semanticProblems(result.data);
  if (problems.length > 0) throw new InvalidInput(`scenario ${source}`, problems);
  return build(result.data, source);
}

function duplicates(section: string, items: readonly { key: string }[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  items.forEach((item, index) => {
    if (seen.has(item.key))
      problems.push({ path: `${section}[${index}].metadata.name`, message: `duplicate ${item.key}` });
    seen.add(item.key);
  });
  return problems;
}

const manifestKey = (m: ScenarioManifest): string =>
  `${m.kind} ${m.metadata.namespace ?? 'default'}/${m.metadata.name}`;

function workloadProblems(file: ScenarioFile): FieldProblem[] {
  const problems: FieldProblem[] = [];
  (file.workloads ?? []).forEach((w, index) => {
    if (w.kind === 'Job') return;
    const selector = w.spec.selector as Parameters<typeof selectorMatches>[0];
    if (selector === undefined) {
      problems.push({ path: `workloads[${index}].spec.selector`, message: 'Required value' });
    } else if (!selectorMatches(selector, w.spec.template.metadata?.labels ?? {})) {
      problems.push({
        path: `workloads[${index}].spec.template.metadata.labels`,
        message: '`selector` does not match template `labels`',
      });
    }
  });
  return problems;
}

function semanticProblems(file: ScenarioFile): FieldProblem[] {
  const nodeNames = new Set(file.nodes.map((n) => n.name));
  const problems = [
    ...duplicates(
      'nodes',
      file.nodes.map((n) => ({ key: `node ${n.name}` })),
    ).map((p) => ({ ...p, path: p.path.replace('.metadata', '') })),
    ...duplicates(
      'workloads',
      (file.workloads ?? []).map((w) => ({ key: manifestKey(w) })),
    ),
    ...duplicates(
      'pdbs',
      (file.pdbs ?? []).map((p) => ({ key: manifestKey(p) })),
    ),
    ...duplicates(
      'pods',
      (file.pods ?? []).map((p) => ({ key: manifestKey(p) })),
    ),
    ...duplicates(
      'kubevirt.virtualMachines',
      (file.kubevirt?.virtualMachines ?? []).map((v) => ({ key: manifestKey(v) })),
    ),
    ...duplicates(
      'kubevirt.virtualMachineInstances',
      (file.kubevirt?.virtualMachineInstances ?? []).map((v) => ({ key: manifestKey(v) })),
    ),
    ...workloadProblems(file),
  ];
  (file.pdbs ?? []).forEach((pdb, index) => {
    if (pdb.spec.minAvailable !== undefined && pdb.spec.maxUnavailable !== undefined) {
      problems.push({ path: `pdbs[${index}].spec`, message: 'minAvailable and maxUnavailable cannot be both set' });
    }
  });
  (file.pods ?? []).forEach((pod, index) => {
    const nodeName = pod.spec.nodeName;
    if (typeof nodeName === 'string' && !nodeNames.has(nodeName)) {
      problems.push({ path: `pods[${index}].spec.nodeName`, message: `unknown node "${nodeName}"` });
    }
  });
  return problems;
}

/** A boot ID for `nodeName`'s `boot`-th boot: a UUID, the same every run (the kernel's is random). */
export function bootIdOf(nodeName: string, boot: number): string {
  const hex = createHash('sha256').update(`${nodeName}/${boot}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The Node object for a scenario node: Ready, with capacity, addresses and a pod CIDR by position. */
export function nodeObject(node: ScenarioNode, index: number): KubeObject {
  const capacity = {
    cpu: String(node.capacity?.cpu ?? '8'),
    memory: String(node.capacity?.memory ?? '32Gi'),
    pods: String(node.capacity?.pods ?? 110),
    'ephemeral-storage': '100Gi',
  };
  const ready = node.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...node.labels,
      },
      ...(node.annotations ? { annotations: node.annotations } : {}),
    },
    spec: {
      podCIDR: `10.244.${index}.0/24`,
      podCIDRs: [`10.244.${index}.0/24`],
      ...(node.providerID ? { providerID: node.providerID } : {}),
      ...(node.unschedulable ? { unschedulable: true } : {}),
      ...(node.taints ? { taints: node.taints } : {}),
    },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        ready
          ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
          : {
              type: 'Ready',
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              message: 'Kubelet stopped posting node status.',
            },
      ],
      addresses: [
        { type: 'InternalIP', address: `10.0.0.${10 + (index % 240)}` },
        { type: 'Hostname', address: node.name },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.4',
        containerRuntimeVersion: 'containerd://1.7.24',
        operatingSystem: 'linux',
        architecture: 'amd64',
        osImage: 'Ubuntu 24.04 LTS',
        kernelVersion: '6.8.0',
        // The kubelet reports the kernel's boot_id; a reboot changes it (how kured and drainbridge's
        // reboot source tell a reboot happened). Tests "reboot" a node by changing it.
        bootID: bootIdOf(node.name, 0),
      },
    },
  };
}

function withDefaultNamespace(manifest: ScenarioManifest): KubeObject {
  const { count: _count, ...object } = manifest as ScenarioManifest & { count?: number };
  return structuredClone(object) as KubeObject;
}

function expandPods(file: ScenarioFile): KubeObject[] {
  return (file.pods ?? []).flatMap((pod) => {
    const object = withDefaultNamespace(pod);
    if (pod.count === undefined) return [object];
    return Array.from({ length: pod.count }, (_, i) => ({
      ...structuredClone(object),
      metadata: { ...structuredClone(object.metadata), name: `${pod.metadata.name}-${i + 1}` },
    }));
  });
}

function namespacesOf(file: ScenarioFile): KubeObject[] {
  const used = [
    ...(file.namespaces ?? []),
    ...[
      ...(file.customResources ?? []),
      ...(file.workloads ?? []),
      ...(file.pdbs ?? []),
      ...(file.pods ?? []),
      ...(file.kubevirt?.virtualMachines ?? []),
      ...(file.kubevirt?.virtualMachineInstances ?? []),
    ].map((m) => m.metadata.namespace),
    ...file.nodes.flatMap((n) => (n.staticPods ?? []).map((p) => p.namespace ?? 'kube-system')),
  ];
  const names = [...new Set(used.filter((n): n is string => n !== undefined))];
  return names.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
}

/** KubeVirt's install (namespace, CRDs, KubeVirt CR) and the scenario's VMs and VMIs. */
function kubevirtObjects(section: KubevirtSection | undefined): KubeObject[] {
  if (!section) return [];
  return [
    ...kubeVirtInstallObjects(section.configuration ?? {}),
    ...(section.virtualMachines ?? []).map((vm) => structuredClone(vm) as KubeObject),
    ...(section.virtualMachineInstances ?? []).map((vmi) => structuredClone(vmi) as KubeObject),
  ];
}

const msOf = (seconds: number | undefined): number | undefined => (seconds === undefined ? undefined : seconds * 1000);

/** The section's KubeVirt options, timings turned into milliseconds. */
function kubevirtOptions(section: KubevirtSection): KubeVirtOptions {
  const t = section.timings ?? {};
  const timings: Record<string, number | undefined> = {
    targetPreparationMs: msOf(t.targetPreparationSeconds),
    migrationStartMs: msOf(t.migrationStartSeconds),
    transferBaseMs: msOf(t.transferBaseSeconds),
    transferMsPerGiB: msOf(t.transferSecondsPerGiB),
    abortMs: msOf(t.abortSeconds),
    sourceLauncherExitMs: msOf(t.sourceLauncherExitSeconds),
  };
  const defined = Object.fromEntries(Object.entries(timings).filter(([, v]) => v !== undefined)) as KubeVirtTimings;
  return { configuration: section.configuration ?? {}, timings: defined };
}

function build(file: ScenarioFile, source: string): Scenario {
  const objects = [
    ...namespacesOf(file),
    ...file.nodes.map(nodeObject),
    ...(file.crds ?? []).map(withDefaultNamespace),
    ...kubevirtObjects(file.kubevirt),
    ...(file.customResources ?? []).map(withDefaultNamespace),
    ...(file.workloads ?? []).map(withDefaultNamespace),
    ...(file.pdbs ?? []).map(withDefaultNamespace),
    ...expandPods(file),
  ];
  const staticPods = Object.fromEntries(
    file.nodes.filter((n) => n.staticPods).map((n) => [n.name, n.staticPods as StaticPod[]]),
  );
  return {
    name: file.name,
    ...(file.description ? { description: file.description } : {}),
    source,
    speed: file.speed ?? 1,
    podStartupDelayMs: (file.podStartupDelaySeconds ?? 2) * 1000,
    jobPodRunMs: (file.jobRunSeconds ?? 5) * 1000,
    objects,
    staticPods,
    ...(file.kubevirt ? { kubevirt: kubevirtOptions(file.kubevirt) } : {}),
  };
}
