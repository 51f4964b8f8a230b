/**
 * Offline validation of deploy/: renders every kustomize target with the real `kubectl kustomize` and
 * checks each object against the Kubernetes OpenAPI schemas (kubernetes-models: types, required fields,
 * enums, formats — not unknown fields, which its schemas allow), then drainbridge's own rules: containers
 * non-root with a read-only root filesystem and no privilege escalation; the forwarder's ClusterRole
 * read-only on nodes. Exit 1 listing every problem.
 *
 *   node scripts/validate-manifests.ts
 */
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { findKubectl } from '../sim/kubectl.ts';

export const TARGETS = [
  'deploy/base',
  'deploy/overlays/nmo-installed',
  'deploy/overlays/forwarder',
  'deploy/overlays/forwarder-irsa',
  'deploy/overlays/forwarder-secret',
  'deploy/overlays/forwarder-nmo',
  'deploy/overlays/run',
  'deploy/overlays/run-nmo',
  'deploy/overlays/run-gates',
  'deploy/overlays/node-agent-aws',
  'deploy/overlays/node-agent-azure',
  'deploy/overlays/node-agent-gcp',
  'deploy/overlays/node-agent-run',
];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
  [key: string]: unknown;
}

type ModelClass = new (data: unknown) => { validate(): void };

async function modelFor(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const module = (await import(`kubernetes-models/${apiVersion}`)) as Record<string, ModelClass>;
  return module[kind];
}

interface Container {
  name?: string;
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[];
}

function deploymentProblems(doc: Manifest): string[] {
  const pod = (
    doc.spec as { template: { spec: { securityContext?: { runAsNonRoot?: boolean }; containers: Container[] } } }
  ).template.spec;
  const problems: string[] = [];
  if (pod.securityContext?.runAsNonRoot !== true) problems.push('pod securityContext.runAsNonRoot must be true');
  for (const c of pod.containers) {
    if (c.securityContext?.readOnlyRootFilesystem !== true)
      problems.push(`container ${c.name}: readOnlyRootFilesystem must be true`);
    if (c.securityContext?.allowPrivilegeEscalation !== false)
      problems.push(`container ${c.name}: allowPrivilegeEscalation must be false`);
  }
  return problems;
}

function forwarderRoleProblems(doc: Manifest): string[] {
  const rules = (doc.rules as { apiGroups?: string[]; resources?: string[]; verbs?: string[] }[]) ?? [];
  const nodeVerbs = rules
    .filter((r) => r.apiGroups?.includes('') && r.resources?.includes('nodes'))
    .flatMap((r) => r.verbs ?? []);
  const writes = nodeVerbs.filter((verb) => !['get', 'list', 'watch'].includes(verb));
  return writes.length > 0 ? [`the forwarder must be read-only on nodes (has ${writes.join(', ')})`] : [];
}

/** The node agent reads only: get and list, nothing else, on anything. */
function nodeAgentRoleProblems(doc: Manifest): string[] {
  const rules = (doc.rules as { verbs?: string[] }[]) ?? [];
  const others = rules.flatMap((r) => r.verbs ?? []).filter((verb) => !['get', 'list'].includes(verb));
  return others.length > 0 ? [`the node agent only reads (get, list); has ${others.join(', ')}`] : [];
}

/** Each agent reports its own node: the name from the downward API, and a cloud to read. */
function nodeAgentProblems(doc: Manifest): string[] {
  const pod = (doc.spec as { template: { spec: { containers: Container[] } } }).template.spec;
  const env = pod.containers[0]?.env ?? [];
  const problems: string[] = [];
  const nodeName = env.find((e) => e.name === 'DRAINBRIDGE_NODE_NAME');
  if (nodeName?.valueFrom?.fieldRef?.fieldPath !== 'spec.nodeName')
    problems.push('DRAINBRIDGE_NODE_NAME must come from the downward API (fieldRef spec.nodeName)');
  if (!env.some((e) => e.name === 'DRAINBRIDGE_AGENT_PROVIDER' && e.value))
    problems.push('DRAINBRIDGE_AGENT_PROVIDER must name the cloud (the overlay sets it)');
  return problems;
}

function policyProblems(doc: Manifest): string[] {
  if (doc.kind === 'Deployment') return deploymentProblems(doc);
  if (doc.kind === 'DaemonSet') return [...deploymentProblems(doc), ...nodeAgentProblems(doc)];
  if (doc.kind === 'ClusterRole' && doc.metadata.name === 'drainbridge-forwarder') return forwarderRoleProblems(doc);
  if (doc.kind === 'ClusterRole' && doc.metadata.name === 'drainbridge-node-agent') return nodeAgentRoleProblems(doc);
  return [];
}

export async function validateTarget(kubectl: string, target: string): Promise<{ count: number; problems: string[] }> {
  const rendered = execFileSync(kubectl, ['kustomize', target], { encoding: 'utf8' });
  const problems: string[] = [];
  const docs = parseAllDocuments(rendered)
    .map((d) => d.toJSON() as Manifest)
    .filter(Boolean);
  for (const doc of docs) {
    const where = `${target}: ${doc.kind}/${doc.metadata?.name}`;
    const Model = await modelFor(doc.apiVersion, doc.kind).catch(() => undefined);
    if (!Model) {
      problems.push(`${where}: no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
    }
    for (const problem of policyProblems(doc)) problems.push(`${where}: ${problem}`);
  }
  return { count: docs.length, problems };
}

if (import.meta.main) {
  const kubectl = findKubectl();
  if (!kubectl) {
    console.error('validate-manifests: kubectl is needed to render the kustomize targets');
    process.exit(1);
  }
  const problems: string[] = [];
  for (const target of TARGETS) {
    const result = await validateTarget(kubectl, target);
    console.log(`${target}: ${result.count} objects, ${result.problems.length} problems`);
    problems.push(...result.problems);
  }
  for (const problem of problems) console.error(`  - ${problem}`);
  process.exit(problems.length > 0 ? 1 : 0);
}
