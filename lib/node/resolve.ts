/**
 * Resolves a request's target (node name, `spec.providerID`, cloud instance id) to one node. The
 * matching is pure (`matchTarget`); `resolveNode` reads the cluster (a providerID or instance through the
 * index of provider-index.ts).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../clients/kube/client.ts';
import { isNotFound } from '../clients/kube/errors.ts';
import { nodeNotFound, TargetNotFound } from '../errors/index.ts';
import { NOTICE_PROVIDER_IDS, type ProviderIdForm } from '../model/notice.ts';
import type { InstanceProvider, Target } from '../model/request.ts';
import { describeTarget } from '../model/request.ts';
import { nodesMatching } from './provider-index.ts';

/**
 * The providerID form of each instance provider: the clouds' from the model (each cloud's descriptor
 * carries the same scheme), and OpenStack's — cloud-provider-openstack's `openstack:///<server uuid>` —
 * the one provider without notices, so without a cloud descriptor.
 */
const PROVIDER_ID_FORMS: Readonly<Record<InstanceProvider, ProviderIdForm>> = Object.freeze({
  ...NOTICE_PROVIDER_IDS,
  openstack: { scheme: 'openstack://', instanceId: 'last-segment' },
});

/** The providerID scheme of each instance provider (`aws:///zone/i-…`, `alicloud://region.i-…`, `openstack:///uuid`). */
export const PROVIDER_ID_SCHEMES: Readonly<Record<InstanceProvider, string>> = Object.freeze(
  Object.fromEntries(Object.entries(PROVIDER_ID_FORMS).map(([provider, form]) => [provider, form.scheme])) as Record<
    InstanceProvider,
    string
  >,
);

/** Whether a node's providerID names this cloud instance: same scheme, the instance id where its form puts it. */
export function providerIdMatches(providerID: string, provider: InstanceProvider, id: string): boolean {
  const form = PROVIDER_ID_FORMS[provider];
  if (!providerID.startsWith(form.scheme)) return false;
  const last = providerID.split('/').pop() ?? '';
  // `<region>.<instance id>`: without the dot there is no instance id (never the region taken for one).
  const instance = form.instanceId === 'after-region' ? last.split('.').slice(1).join('.') : last;
  return instance !== '' && instance.toLowerCase() === id.toLowerCase();
}

/** The nodes a providerID or instance target names (pure). */
export function matchTarget(nodes: readonly V1Node[], target: Target): V1Node[] {
  if ('nodeName' in target) return nodes.filter((node) => node.metadata?.name === target.nodeName);
  if ('providerID' in target) return nodes.filter((node) => node.spec?.providerID === target.providerID);
  const { provider, id } = target.instance;
  return nodes.filter((node) => providerIdMatches(node.spec?.providerID ?? '', provider, id));
}

/** The name of the node the target names; TargetNotFound when none or more than one match. */
export async function resolveNode(client: KubeClient, target: Target): Promise<string> {
  if ('nodeName' in target) {
    try {
      return (await client.getNode(target.nodeName)).metadata?.name ?? target.nodeName;
    } catch (error) {
      if (isNotFound(error)) throw new TargetNotFound(nodeNotFound(target.nodeName));
      throw error;
    }
  }
  // No selector finds a providerID: every node is listed once and indexed (provider-index.ts), not per request.
  const matches = await nodesMatching(client, (nodes) => matchTarget(nodes, target));
  if (matches.length === 0) throw new TargetNotFound(`no node has ${describeTarget(target)}`);
  if (matches.length > 1) {
    const names = matches.map((node) => node.metadata?.name).join(', ');
    throw new TargetNotFound(`${describeTarget(target)} is ambiguous: nodes ${names}`);
  }
  return matches[0]?.metadata?.name ?? '';
}
