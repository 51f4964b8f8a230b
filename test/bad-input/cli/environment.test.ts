/**
 * Bad environments: each DRAINBRIDGE_* setting with a value it cannot take, and access settings that
 * cannot work. Refused before anything is contacted (exit 2), naming the variable, never echoing a secret;
 * Nova enabled without credentials is a cluster not ready (exit 4). No write in the request log.
 */
import { type BadInput, corpusSuite, scratch } from './support.ts';

const BROKEN_CLOUDS_PASSWORD = 'SuperSecret123';
const BROKEN_CLOUDS_YAML = [
  'clouds:',
  '  lab:',
  '    auth:',
  '      auth_url: http://127.0.0.1:9/v3',
  '      username: admin',
  `      password: ${BROKEN_CLOUDS_PASSWORD}: oops`,
  '',
].join('\n');

const plan = ['plan', 'node-1'];
const evacuate = ['evacuate', 'node-1', '--ignore-daemonsets'];
const env = (name: string, value: string, argv = evacuate, names: (string | RegExp)[] = [name]): BadInput => ({
  name: `${name}=${JSON.stringify(value)}`,
  argv,
  env: { [name]: value },
  names,
});

const CASES: BadInput[] = [
  env('DRAINBRIDGE_MAX_HELD_NODES', '0', evacuate, ['DRAINBRIDGE_MAX_HELD_NODES', 'must be at least 1']),
  env('DRAINBRIDGE_MAX_HELD_NODES', 'two', evacuate, ['DRAINBRIDGE_MAX_HELD_NODES', 'must be a whole number']),
  env('DRAINBRIDGE_MAX_HELD_NODES', '-1'),
  env('DRAINBRIDGE_MAX_HELD_NODES', '1.5'),
  env('DRAINBRIDGE_MAX_HELD_NODES', '0x10'),
  env('DRAINBRIDGE_SLOT_LIMITS', 'zone', evacuate, ['DRAINBRIDGE_SLOT_LIMITS', 'SELECTOR=MAX']),
  env('DRAINBRIDGE_SLOT_LIMITS', 'zone=a=0'),
  env('DRAINBRIDGE_SLOT_LIMITS', '!!=1'),
  env('DRAINBRIDGE_SPREAD_LIMITS', 'topology.kubernetes.io/zone', evacuate, [
    'DRAINBRIDGE_SPREAD_LIMITS',
    'LABEL_KEY=MAX',
  ]),
  env('DRAINBRIDGE_SPREAD_LIMITS', 'zone=zone-a=1'),
  env('DRAINBRIDGE_MIN_SCHEDULABLE', 'node-role.kubernetes.io/worker=0', evacuate, [
    'DRAINBRIDGE_MIN_SCHEDULABLE',
    'SELECTOR=MIN',
  ]),
  env('DRAINBRIDGE_MIN_SCHEDULABLE', '!!=2'),
  env('DRAINBRIDGE_GATES', '[{kind: prometheus-alerts, url: prometheus:9090}]', evacuate, [
    'DRAINBRIDGE_GATES[0].url',
    'must be an http:// or https:// URL',
  ]),
  env('DRAINBRIDGE_GATES', '[{kind: not-ready-nodes, max: 1, timout: 5s}]', plan, [
    'DRAINBRIDGE_GATES[0].timout',
    'unknown field',
  ]),
  env('DRAINBRIDGE_GATES', '{kind: http', evacuate, ['DRAINBRIDGE_GATES', 'not valid YAML or JSON']),
  env('DRAINBRIDGE_KUBE_ACCESS', 'bogus', evacuate, [
    'DRAINBRIDGE_KUBE_ACCESS',
    'must be one of kubeconfig, in-cluster, secret, token, eks',
  ]),
  {
    name: 'token access without server and token',
    argv: evacuate,
    env: { DRAINBRIDGE_KUBE_ACCESS: 'token' },
    names: ['DRAINBRIDGE_KUBE_SERVER', 'DRAINBRIDGE_KUBE_TOKEN', 'is required'],
  },
  {
    name: 'token access with a server that is not a URL',
    argv: evacuate,
    env: {
      DRAINBRIDGE_KUBE_ACCESS: 'token',
      DRAINBRIDGE_KUBE_SERVER: 'kube.example',
      DRAINBRIDGE_KUBE_TOKEN: 'sekret-token-value',
    },
    names: ['DRAINBRIDGE_KUBE_SERVER'],
  },
  {
    name: 'token access with a CA that is not base64',
    argv: evacuate,
    env: {
      DRAINBRIDGE_KUBE_ACCESS: 'token',
      DRAINBRIDGE_KUBE_SERVER: 'https://kube.example',
      DRAINBRIDGE_KUBE_TOKEN: 'sekret-token-value',
      DRAINBRIDGE_KUBE_CA: '%%%not base64%%%',
    },
    names: ['DRAINBRIDGE_KUBE_CA'],
  },
  {
    name: 'secret access without its reference',
    argv: evacuate,
    env: { DRAINBRIDGE_KUBE_ACCESS: 'secret' },
    names: ['DRAINBRIDGE_KUBECONFIG_REF', 'is required'],
  },
  {
    name: 'eks access without a cluster, server or CA',
    argv: evacuate,
    env: { DRAINBRIDGE_KUBE_ACCESS: 'eks', AWS_REGION: 'eu-west-1' },
    names: ['DRAINBRIDGE_EKS_CLUSTER', 'DRAINBRIDGE_KUBE_SERVER', 'DRAINBRIDGE_KUBE_CA'],
  },
  {
    name: 'eks access with an http server',
    argv: evacuate,
    env: {
      DRAINBRIDGE_KUBE_ACCESS: 'eks',
      DRAINBRIDGE_EKS_CLUSTER: 'prod',
      DRAINBRIDGE_KUBE_SERVER: 'http://kube.example',
      DRAINBRIDGE_KUBE_CA: 'AAAA',
      AWS_REGION: 'eu-west-1',
    },
    names: ['DRAINBRIDGE_KUBE_SERVER', 'https://'],
  },
  {
    name: 'eks access with a bad region',
    argv: evacuate,
    env: {
      DRAINBRIDGE_KUBE_ACCESS: 'eks',
      DRAINBRIDGE_EKS_CLUSTER: 'prod',
      DRAINBRIDGE_KUBE_SERVER: 'https://kube.example',
      DRAINBRIDGE_KUBE_CA: 'AAAA',
      DRAINBRIDGE_EKS_REGION: 'Mars',
    },
    names: ['DRAINBRIDGE_EKS_REGION'],
  },
  env('DRAINBRIDGE_EKS_CLUSTER', 'bad name!', evacuate, ['DRAINBRIDGE_EKS_CLUSTER']),
  env('DRAINBRIDGE_NAMESPACE', 'Bad_NS', evacuate, ['DRAINBRIDGE_NAMESPACE', 'must be a valid namespace name']),
  env('DRAINBRIDGE_NAMESPACE', 'x'.repeat(64)),
  env('DRAINBRIDGE_TOMBSTONE_TTL_HOURS', 'a day'),
  env('DRAINBRIDGE_TOMBSTONE_TTL_HOURS', '1', evacuate, ['DRAINBRIDGE_TOMBSTONE_TTL_HOURS', 'must be at least 24']),
  env('DRAINBRIDGE_RECORD_TTL_HOURS', '0', evacuate, ['DRAINBRIDGE_RECORD_TTL_HOURS', 'must be at least 1']),
  env('DRAINBRIDGE_RECORD_TTL_HOURS', '1e3', ['status'], ['DRAINBRIDGE_RECORD_TTL_HOURS', 'must be a whole number']),
  env('DRAINBRIDGE_MAX_EVACUATION_HOURS', '721', evacuate, ['DRAINBRIDGE_MAX_EVACUATION_HOURS', 'must be at most 720']),
  env('DRAINBRIDGE_MAX_EVACUATION_HOURS', '0'),
  env('DRAINBRIDGE_NOVA', 'maybe', evacuate, ['DRAINBRIDGE_NOVA', 'must be true or false']),
  env('DRAINBRIDGE_NOVA_HOST_RULE', 'regex:(', evacuate, ['DRAINBRIDGE_NOVA_HOST_RULE']),
  env('DRAINBRIDGE_NOVA_HOST_RULE', 'sometimes'),
  env('DRAINBRIDGE_NOVA_NODE_SELECTOR', '!!'),
  env('DRAINBRIDGE_NOVA_MAX_CONCURRENT_MIGRATIONS', '0'),
  env('DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT', '5', evacuate, [
    'DRAINBRIDGE_NOVA_MIGRATION_TIMEOUT',
    'must be at least 30',
  ]),
  env('DRAINBRIDGE_NOVA_MAX_MIGRATION_ATTEMPTS', '99'),
  env('DRAINBRIDGE_NOVA_SHUTOFF_POLICY', 'delete', evacuate, [
    'DRAINBRIDGE_NOVA_SHUTOFF_POLICY',
    'must be block or cold-migrate',
  ]),
  env('DRAINBRIDGE_KUBEVIRT_RESTART_UNMIGRATABLE', 'maybe'),
  env('DRAINBRIDGE_KUBEVIRT_MAX_MIGRATIONS_PER_NODE', '0'),
  env('DRAINBRIDGE_KUBEVIRT_MAX_MIGRATION_ATTEMPTS', 'three'),
  env('DRAINBRIDGE_DRAIN_GRACE_PERIOD', '0x10'),
  env('DRAINBRIDGE_DRAIN_GRACE_PERIOD', '-2', evacuate, ['DRAINBRIDGE_DRAIN_GRACE_PERIOD', 'must be at least -1']),
  env('DRAINBRIDGE_DRAIN_TIMEOUT', '5m', evacuate, ['DRAINBRIDGE_DRAIN_TIMEOUT', 'must be a whole number']),
  env('DRAINBRIDGE_DRAIN_POD_SELECTOR', 'app in (web'),
  env('DRAINBRIDGE_DRAIN_FORCE', 'yes', evacuate, ['DRAINBRIDGE_DRAIN_FORCE', 'must be true or false']),
  env('DRAINBRIDGE_DRAIN_IGNORE_DAEMONSETS', 'on'),
  env('DRAINBRIDGE_DRAIN_DELETE_EMPTYDIR_DATA', 'TRUE'),
  env('DRAINBRIDGE_DRAIN_DISABLE_EVICTION', '2'),
  env('DRAINBRIDGE_DRAIN_SKIP_WAIT_FOR_DELETE_TIMEOUT', '-1'),
  env('DRAINBRIDGE_DRAIN_CHUNK_SIZE', '0', plan, ['DRAINBRIDGE_DRAIN_CHUNK_SIZE', 'must be at least 1']),
  env('DRAINBRIDGE_COMPAT_TAINTS', 'example.com/drain', evacuate, ['DRAINBRIDGE_COMPAT_TAINTS', 'medik8s.io/drain']),
  env('DRAINBRIDGE_INFRA_POD_SELECTOR', '!!', plan),
  env('DRAINBRIDGE_MODE', 'cloud', evacuate, ['DRAINBRIDGE_MODE', 'must be aws or embedded']),
  env('DRAINBRIDGE_EVENT_BUS', 'x'.repeat(300)),
  env('DRAINBRIDGE_LOG_LEVEL', 'loud', evacuate, ['DRAINBRIDGE_LOG_LEVEL', '"loud"']),
  env('DRAINBRIDGE_LOG_FORMAT', 'yaml', plan, ['DRAINBRIDGE_LOG_FORMAT', '"yaml"']),
  env('DRAINBRIDGE_LOG_FILE', '/nonexistent-dir/drainbridge.log', plan, [
    '--log-file',
    '/nonexistent-dir/drainbridge.log',
  ]),
  env('DRAINBRIDGE_KUBE_CONTEXT', 'nosuch', plan, ['DRAINBRIDGE_KUBE_CONTEXT', 'context "nosuch"']),
  env('KUBECONFIG', '/nonexistent/kubeconfig', plan, ['KUBECONFIG', '/nonexistent/kubeconfig']),
  {
    name: 'several bad settings are listed together',
    argv: evacuate,
    env: { DRAINBRIDGE_MAX_HELD_NODES: '0', DRAINBRIDGE_NOVA: 'maybe', DRAINBRIDGE_NAMESPACE: 'A' },
    names: ['DRAINBRIDGE_MAX_HELD_NODES', 'DRAINBRIDGE_NOVA', 'DRAINBRIDGE_NAMESPACE'],
  },
  {
    name: 'Nova enabled without OpenStack credentials',
    argv: evacuate,
    env: { DRAINBRIDGE_NOVA: 'true' },
    exit: 4,
    names: ['OpenStack credentials cannot be loaded', 'OS_AUTH_URL', 'OS_* variables'],
  },
  {
    name: 'Nova enabled with an unreachable Keystone',
    argv: plan,
    env: {
      DRAINBRIDGE_NOVA: 'true',
      OS_AUTH_URL: 'http://127.0.0.1:9/v3',
      OS_USERNAME: 'admin',
      OS_PASSWORD: 'sekret-os-password',
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    },
    exit: 4,
    names: ['Nova does not answer', 'OS_AUTH_URL'],
  },
  {
    name: 'Nova enabled with a clouds.yaml entry that does not exist',
    argv: plan,
    env: { DRAINBRIDGE_NOVA: 'true', OS_CLOUD: 'nosuch', OS_CLIENT_CONFIG_FILE: '{dir}/clouds.yaml' },
    exit: 4,
    names: ['OpenStack credentials cannot be loaded', 'nosuch'],
  },
  {
    // The YAML parser's own message quotes the offending line: here, the password.
    name: 'Nova enabled with a clouds.yaml whose password line is not valid YAML',
    argv: plan,
    env: { DRAINBRIDGE_NOVA: 'true', OS_CLOUD: 'lab', OS_CLIENT_CONFIG_FILE: '{dir}/broken-clouds.yaml' },
    exit: 4,
    names: ['OpenStack credentials cannot be loaded', 'broken-clouds.yaml is not valid YAML (line 6)', 'clouds.yaml'],
    secrets: [BROKEN_CLOUDS_PASSWORD],
  },
];

corpusSuite('bad environments (drainbridge CLI)', CASES, {
  prepare: (corpus) => {
    scratch(corpus, 'broken-clouds.yaml', BROKEN_CLOUDS_YAML);
  },
});
