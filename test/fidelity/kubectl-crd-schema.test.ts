/**
 * Fidelity with the real kubectl for what a cluster's control plane enforces on custom resources and
 * nodes: a CR that breaks its CRD's schema is refused with the API server's 422 (kubectl prints it),
 * unknown fields are refused under kubectl's default `--validate=strict` and pruned with a warning
 * under `--validate=warn`, a transition rule (`x-kubernetes-validations` with `oldSelf`) refuses a
 * `kubectl patch` (NodeMaintenance's at `spec.nodeName`, as NMO words it), a rule that does not
 * type-check against its field refuses the CRD, and `kubectl cordon` gets the node lifecycle controller's
 * `node.kubernetes.io/unschedulable:NoSchedule` taint, which `kubectl uncordon` takes away again
 * along with `spec.unschedulable` (omitted when false). A validating webhook's refusal reaches kubectl
 * as the API server words it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Simulator, startSimulator } from '../../sim/index.ts';
import { whenSettled } from '../../sim/scenarios/index.ts';
import { generateServingCertificate } from '../../sim/tls.ts';
import { waitUntil } from '../support/wait.ts';
import { findKubectl, Kubectl } from './kubectl-runner.ts';

const NMS = { group: 'nodemaintenance.medik8s.io', resource: 'nodemaintenances' };
const binary = findKubectl();
const skip = binary ? false : 'kubectl not found on this machine (the fidelity suite needs /usr/bin/kubectl)';

if (!binary && process.env.CI === 'true') {
  it('kubectl is present in CI', () => assert.fail('kubectl not found and CI=true: the fidelity suite must run in CI'));
}

/** A CRD with the kinds of rules NodeMaintenance gets: nodeName immutable and not empty. */
const LEASE_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: holds.example.io
spec:
  group: example.io
  scope: Cluster
  names: { plural: holds, singular: hold, kind: Hold }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [nodeName]
              x-kubernetes-validations:
                - rule: self.nodeName == oldSelf.nodeName
                  message: nodeName is immutable
                - rule: size(self.nodeName) > 0
                  message: nodeName must not be empty
              properties:
                nodeName: { type: string }
                reason: { type: string }
                mode: { type: string, default: Drain }
`;

const nodeMaintenance = (name: string, spec: string): string => `
apiVersion: nodemaintenance.medik8s.io/v1beta1
kind: NodeMaintenance
metadata:
  name: ${name}
spec:
${spec}
`;

describe('kubectl: CRD schemas and the cordon taint', { skip }, () => {
  let sim: Simulator;
  let kubectl: Kubectl;

  const ok = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl.run(args, input === undefined ? {} : { input });
    assert.equal(result.code, 0, `kubectl ${args.join(' ')} failed:\n${result.stderr}`);
    return result.stdout;
  };
  const refused = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl.run(args, input === undefined ? {} : { input });
    assert.notEqual(result.code, 0, `kubectl ${args.join(' ')} succeeded:\n${result.stdout}`);
    return result.stderr;
  };

  before(async () => {
    sim = await startSimulator({ scenario: 'small', speed: 20 });
    kubectl = new Kubectl(binary as string, sim.kubeconfig());
    if (sim.scenario) await whenSettled(sim.store, sim.scenario, 20_000);
    await ok(['apply', '-f', '-'], readFileSync('deploy/base/crds/nodemaintenances.yaml', 'utf8'));
    await ok(['apply', '-f', '-'], LEASE_CRD);
  });
  after(async () => {
    kubectl?.close();
    await sim?.stop();
  });

  it("kubectl apply of a CR missing a required field prints the API server's 422 and stores nothing", async () => {
    const stderr = await refused(['apply', '-f', '-'], nodeMaintenance('nm-bad', '  reason: patching'));
    // kubectl words a 422 from its causes (details.kind, name, each field and message), as for a cluster.
    assert.match(stderr, /^The NodeMaintenance "nm-bad" is invalid: (\n\* )?spec\.nodeName: Required value\n/);
    assert.equal(sim.store.get(NMS, undefined, 'nm-bad'), undefined);
    const typed = await refused(['apply', '-f', '-'], nodeMaintenance('nm-typed', '  nodeName: 42'));
    assert.match(
      typed,
      /spec\.nodeName: Invalid value: "integer": spec\.nodeName in body must be of type string: "integer"/,
    );
  });

  it('a default is applied; an unknown field is refused under --validate=strict and pruned with a warning under warn', async () => {
    const manifest =
      'apiVersion: example.io/v1\nkind: Hold\nmetadata: { name: h-extra }\nspec: { nodeName: node-2, surprise: 1 }\n';
    const strict = await refused(['apply', '-f', '-'], manifest);
    assert.match(strict, /strict decoding error: unknown field "spec\.surprise"/);
    const result = await kubectl.run(['apply', '--validate=warn', '-f', '-'], { input: manifest });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Warning: unknown field "spec\.surprise"/);
    const spec = JSON.parse(await ok(['get', 'hold', 'h-extra', '-o', 'jsonpath={.spec}'])) as Record<string, unknown>;
    assert.deepEqual(spec, { nodeName: 'node-2', mode: 'Drain' });
    await ok(['delete', 'hold', 'h-extra']);
  });

  it('kubectl patch breaking a transition rule is refused with the rule message; an allowed change passes', async () => {
    await ok(
      ['apply', '-f', '-'],
      'apiVersion: example.io/v1\nkind: Hold\nmetadata: { name: h1 }\nspec: { nodeName: node-1 }\n',
    );
    const stderr = await refused(['patch', 'hold', 'h1', '--type=merge', '-p', '{"spec":{"nodeName":"node-2"}}']);
    assert.match(stderr, /The Hold "h1" is invalid: spec: Invalid value: "object": nodeName is immutable/);
    const empty = await refused(
      ['apply', '-f', '-'],
      'apiVersion: example.io/v1\nkind: Hold\nmetadata: { name: h2 }\nspec: { nodeName: "" }\n',
    );
    assert.match(empty, /The Hold "h2" is invalid: spec: Invalid value: "object": nodeName must not be empty/);
    await ok(['patch', 'hold', 'h1', '--type=merge', '-p', '{"spec":{"reason":"kernel"}}']);
    assert.equal(await ok(['get', 'hold', 'h1', '-o', 'jsonpath={.spec.nodeName}']), 'node-1');
  });

  it("NodeMaintenance's nodeName rule (self == oldSelf): a patch is refused at spec.nodeName with NMO's message", async () => {
    await ok(['apply', '-f', '-'], nodeMaintenance('nm-rename', '  nodeName: node-1'));
    const stderr = await refused([
      'patch',
      'nodemaintenance',
      'nm-rename',
      '--type=merge',
      '-p',
      '{"spec":{"nodeName":"node-2"}}',
    ]);
    assert.match(
      stderr,
      /The NodeMaintenance "nm-rename" is invalid: spec\.nodeName: Invalid value: "string": updating spec\.NodeName isn't allowed/,
    );
    await ok(['patch', 'nodemaintenance', 'nm-rename', '--type=merge', '-p', '{"spec":{"reason":"kernel"}}']);
    assert.equal(await ok(['get', 'nodemaintenance', 'nm-rename', '-o', 'jsonpath={.spec.nodeName}']), 'node-1');
    await ok(['delete', 'nodemaintenance', 'nm-rename', '--wait=false']);
  });

  it('a CRD whose rule does not type-check against its field is refused by kubectl apply, and nothing is served', async () => {
    const bad = LEASE_CRD.replaceAll('holds', 'clamps')
      .replace('singular: hold, kind: Hold', 'singular: clamp, kind: Clamp')
      .replace('size(self.nodeName) > 0', 'self.nodeName == 1');
    const stderr = await refused(['apply', '-f', '-'], bad);
    assert.match(
      stderr,
      /CustomResourceDefinition.* "clamps\.example\.io" is invalid: spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[1\]\.rule: Invalid value: "self\.nodeName == 1": compilation failed/,
    );
    assert.equal(sim.store.registry.get({ group: 'example.io', resource: 'clamps' }), undefined);
  });

  it('cordon gets the unschedulable taint with timeAdded; uncordon removes it and omits spec.unschedulable', async () => {
    await ok(['cordon', 'node-2']);
    const taintsOf = async (): Promise<{ key: string; effect: string; timeAdded?: string }[]> => {
      const out = await ok(['get', 'node', 'node-2', '-o', 'jsonpath={.spec.taints}']);
      return out ? (JSON.parse(out) as { key: string; effect: string; timeAdded?: string }[]) : [];
    };
    await waitUntil(
      'the cordon taint',
      async () => (await taintsOf()).some((t) => t.key === 'node.kubernetes.io/unschedulable'),
      10_000,
    );
    const taint = (await taintsOf()).find((t) => t.key === 'node.kubernetes.io/unschedulable');
    assert.equal(taint?.effect, 'NoSchedule');
    assert.match(taint?.timeAdded ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.match(await ok(['describe', 'node', 'node-2']), /Taints:\s+node\.kubernetes\.io\/unschedulable:NoSchedule/);

    await ok(['uncordon', 'node-2']);
    await waitUntil('the taint gone', async () => (await taintsOf()).length === 0, 10_000);
    const spec = JSON.parse(await ok(['get', 'node', 'node-2', '-o', 'jsonpath={.spec}'])) as Record<string, unknown>;
    assert.equal(Object.hasOwn(spec, 'unschedulable'), false, `spec after uncordon: ${JSON.stringify(spec)}`);
    assert.equal(Object.hasOwn(spec, 'taints'), false);
  });

  it("a validating webhook's refusal, as kubectl prints it", async (t) => {
    const certificate = generateServingCertificate();
    if (!certificate) return t.skip('openssl is needed for the webhook server');
    const server = createServer(certificate, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { request } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          request: { uid: string; name: string };
        };
        const status = { code: 403, reason: 'Forbidden', message: `${request.name} is on the deny list` };
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: request.uid, allowed: false, status },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const caBundle = Buffer.from(certificate.cert).toString('base64');
      await ok(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'deny-list' },
          webhooks: [
            {
              name: 'deny.example.io',
              admissionReviewVersions: ['v1'],
              sideEffects: 'None',
              clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle },
              rules: [{ operations: ['CREATE'], apiGroups: ['example.io'], apiVersions: ['v1'], resources: ['holds'] }],
            },
          ],
        }),
      );
      const stderr = await refused(
        ['apply', '-f', '-'],
        'apiVersion: example.io/v1\nkind: Hold\nmetadata: { name: h9 }\nspec: { nodeName: node-1 }\n',
      );
      assert.equal(
        stderr,
        'Error from server (Forbidden): error when creating "STDIN": admission webhook "deny.example.io" denied the request: h9 is on the deny list\n',
      );
      await ok(['delete', 'validatingwebhookconfiguration', 'deny-list']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
