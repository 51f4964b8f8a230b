/**
 * Bad kubeconfigs: files that are not there or not kubeconfigs, contexts and clusters that do not line
 * up, servers that cannot be reached or do not trust, credentials the server refuses. A file the command
 * cannot use is a bad argument (exit 2); a cluster it cannot use is "not ready" (exit 4). Each names the
 * file or what is wrong in it, never echoes the token, and writes nothing.
 */
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { type BadInput, type Corpus, corpusSuite, scratch } from './support.ts';

type Kubeconfig = {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: Record<string, unknown> }[];
  'current-context': string;
  [key: string]: unknown;
};

/** Variants of the ServiceAccount's kubeconfig, by file name. */
const VARIANTS: Record<string, (k: Kubeconfig) => unknown> = {
  'no-contexts': (k) => ({ ...k, contexts: [], 'current-context': '' }),
  'missing-current-context': (k) => ({ ...k, 'current-context': 'nosuch' }),
  'context-without-cluster': (k) => ({
    ...k,
    contexts: k.contexts.map((c) => ({ ...c, context: { ...c.context, cluster: 'nosuch' } })),
  }),
  'context-without-user': (k) => ({
    ...k,
    contexts: k.contexts.map((c) => ({ ...c, context: { ...c.context, user: 'nosuch' } })),
  }),
  'cluster-without-server': (k) => ({
    ...k,
    clusters: k.clusters.map((c) => ({ ...c, cluster: { ...c.cluster, server: undefined } })),
  }),
  'server-not-a-url': (k) => ({
    ...k,
    clusters: k.clusters.map((c) => ({ ...c, cluster: { ...c.cluster, server: 'not a url' } })),
  }),
  'server-refusing': (k) => withServer(k, 'https://127.0.0.1:9'),
  'server-unresolvable': (k) => withServer(k, 'https://no-such-host.invalid:6443'),
  'ca-garbage': (k) => ({
    ...k,
    clusters: k.clusters.map((c) => ({
      ...c,
      cluster: { ...c.cluster, 'certificate-authority-data': 'bm90IGEgY2VydGlmaWNhdGU=' },
    })),
  }),
  'ca-file-missing': (k) => ({
    ...k,
    clusters: k.clusters.map((c) => ({
      ...c,
      cluster: { server: c.cluster.server, 'certificate-authority': '/nonexistent/ca.crt' },
    })),
  }),
  'ca-untrusted': (k) => ({ ...k, clusters: k.clusters.map((c) => ({ ...c, cluster: { server: c.cluster.server } })) }),
  'token-wrong': (k) => ({
    ...k,
    users: k.users.map((u) => ({ ...u, user: { token: 'not-a-token-the-server-knows' } })),
  }),
  'token-file-missing': (k) => ({
    ...k,
    users: k.users.map((u) => ({ ...u, user: { tokenFile: '/nonexistent/token' } })),
  }),
  'client-cert-missing': (k) => ({
    ...k,
    users: k.users.map((u) => ({
      ...u,
      user: { 'client-certificate': '/nonexistent/c.crt', 'client-key': '/nonexistent/c.key' },
    })),
  }),
  'exec-plugin-missing': (k) => ({
    ...k,
    users: k.users.map((u) => ({
      ...u,
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: 'no-such-credential-plugin',
          interactiveMode: 'Never',
        },
      },
    })),
  }),
  'no-user-at-all': (k) => ({ ...k, users: [] }),
};

function withServer(k: Kubeconfig, server: string): Kubeconfig {
  return { ...k, clusters: k.clusters.map((c) => ({ ...c, cluster: { ...c.cluster, server } })) };
}

function prepare(corpus: Corpus): void {
  const sa = parse(readFileSync(corpus.cluster.kubeconfigPath, 'utf8')) as Kubeconfig;
  for (const [name, change] of Object.entries(VARIANTS)) scratch(corpus, name, stringify(change(structuredClone(sa))));
  scratch(corpus, 'empty', '');
  scratch(corpus, 'binary', Buffer.from([0xff, 0xfe, 0x00, 0x13, 0x37, 0x00, 0xc3]));
  scratch(corpus, 'a-list', '- one\n- two\n');
  scratch(corpus, 'not-yaml', 'clusters: [\n  server: {\n');
  scratch(corpus, 'json-array', '[]');
}

const use = (
  file: string,
  exit: number,
  names: (string | RegExp)[],
  argv: string[] = ['plan', 'node-1'],
): BadInput => ({
  name: `kubeconfig ${file}`,
  argv: [...argv, '--kubeconfig', /^[/{]/.test(file) ? file : `{dir}/${file}`],
  exit,
  names,
});

const CASES: BadInput[] = [
  use('/nonexistent/kubeconfig', 2, ['KUBECONFIG', 'cannot read kubeconfig /nonexistent/kubeconfig']),
  use('{dir}', 2, ['cannot read kubeconfig', 'it is a directory']),
  use('empty', 2, ['KUBECONFIG', 'is not a kubeconfig']),
  use('binary', 2, ['KUBECONFIG', /is not (valid YAML|a kubeconfig)/]),
  use('a-list', 2, ['KUBECONFIG', 'is not a kubeconfig']),
  use('not-yaml', 2, ['KUBECONFIG', 'is not valid YAML']),
  use('json-array', 2, ['KUBECONFIG', 'is not a kubeconfig']),
  use('no-contexts', 2, ['KUBECONFIG', 'names no current-context']),
  use('missing-current-context', 2, ['KUBECONFIG', 'context "nosuch" is not in']),
  use('context-without-cluster', 2, ['KUBECONFIG', 'nosuch']),
  use('context-without-user', 2, ['KUBECONFIG', 'names user "nosuch"']),
  use('no-user-at-all', 2, ['KUBECONFIG', /names user "[^"]+", which .* does not define/]),
  use('cluster-without-server', 2, ['KUBECONFIG', 'has no server']),
  use('server-not-a-url', 2, ['KUBECONFIG', 'server "not a url" is not an https:// URL']),
  use('ca-garbage', 4, ['cannot reach the Kubernetes API server', 'certificate']),
  use('ca-file-missing', 2, ['KUBECONFIG', '/nonexistent/ca.crt']),
  use('ca-untrusted', 4, ['cannot reach the Kubernetes API server', 'TLS certificate is not trusted']),
  use('server-refusing', 4, ['cannot reach the Kubernetes API server at https://127.0.0.1:9', 'connection refused']),
  use('server-unresolvable', 4, ['no-such-host.invalid', 'does not resolve']),
  use('token-wrong', 4, ['401 Unauthorized', 'credentials']),
  use('token-file-missing', 2, ['KUBECONFIG', '/nonexistent/token']),
  use('client-cert-missing', 2, ['KUBECONFIG', '/nonexistent/c.crt']),
  use('exec-plugin-missing', 2, ['KUBECONFIG', 'no-such-credential-plugin', 'not on PATH']),
  use('server-refusing', 4, ['connection refused'], ['evacuate', 'node-1', '--ignore-daemonsets']),
  use('token-wrong', 4, ['401 Unauthorized'], ['restore', 'node-1']),
  use('missing-current-context', 2, ['nosuch'], ['check']),
  {
    name: 'a kubeconfig good for another cluster (--context picks a missing one)',
    argv: ['abort', 'node-1', '--kubeconfig', '{sa}', '--context', 'other'],
    names: ['context "other"'],
  },
];

corpusSuite('bad kubeconfigs (drainbridge CLI)', CASES, { prepare, sampleEvery: 5 });
