/**
 * No parser excerpt of a credential file is ever printed (issue 24). A YAML parser's message quotes the
 * line of the error — js-yaml, which @kubernetes/client-node uses, quotes the three lines before it and the
 * two after as well — so a secret planted on, before or after the broken line, or in a duplicated key,
 * would reach the terminal. Each file drainbridge reads credentials from is tried with the secret in each
 * of those positions: kubeconfig (by every reader: the CLI's check, client-node's loader, the lean
 * endpoint reader), clouds.yaml, and the bus endpoint's TLS key (DRAINBRIDGE_BUS_TLS_KEY; the bus key
 * itself is an environment value, never parsed). Each error names the file (and for YAML the line of the
 * error) and holds no secret; the real commands print no secret on stdout or stderr.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readServerTls, readTrustedCa } from '../../../lib/bus/bus-tls.ts';
import { loadKubeEndpoint } from '../../../lib/clients/kube/http/endpoint.ts';
import { loadOpenStackCredentials } from '../../../lib/clients/openstack/credentials.ts';
import { buildKubeConfig } from '../../../lib/config/kube.ts';
import { checkKubeconfigFile } from '../../../lib/config/kubeconfig-check.ts';
import { runCli } from '../../cli/run-cli.ts';
import { makeTestCertificate } from '../../support/tls-cert.ts';

const SECRET = 'Pl4nted-S3cret-0xC0FFEE';
const dir = mkdtempSync(join(tmpdir(), 'drainbridge-credential-files-'));

/** A document with a secret line, and where the error is put around it (the line of the error, 1-based, when sure). */
interface Variant {
  readonly name: string;
  readonly lines: (secretLine: string, indent: string) => string[];
  /** Offset of the reported error's line from the secret's line; undefined where parsers differ. */
  readonly errorOffset?: number;
}

const VARIANTS: readonly Variant[] = [
  { name: 'a compact mapping on the secret line', lines: (s) => [`${s}: oops`], errorOffset: 0 },
  { name: 'the line after broken', lines: (s, i) => [s, `${i}other: a: b`], errorOffset: 1 },
  { name: 'the line before broken', lines: (s, i) => [`${i}other: a: b`, s], errorOffset: -1 },
  { name: 'three lines before the broken one', lines: (s, i) => [s, `${i}x1: 1`, `${i}x2: 2`, `${i}other: a: b`] },
  { name: 'an unterminated quote', lines: (s) => [s.replace(': ', ': "')] },
  { name: 'the secret line twice (a duplicated key)', lines: (s) => [s, s] },
  { name: 'a tab before the secret line', lines: (s, i) => [`\t${s.trimStart()}`, `${i}x: 1`] },
];

/** A kubeconfig whose user's token is the secret, broken as `variant` says; the secret's line. */
function kubeconfig(variant: Variant): { text: string; secretLine: number } {
  const head = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    '    server: https://127.0.0.1:9',
    'contexts:',
    '- name: x',
    '  context: {cluster: c, user: u}',
    'current-context: x',
    'users:',
    '- name: u',
    '  user:',
  ];
  const body = variant.lines(`    token: ${SECRET}`, '    ');
  const secretLine = head.length + body.findIndex((line) => line.includes(SECRET)) + 1;
  return { text: [...head, ...body, ''].join('\n'), secretLine };
}

function cloudsYaml(variant: Variant): { text: string; secretLine: number } {
  const head = ['clouds:', '  lab:', '    auth:', '      auth_url: http://127.0.0.1:9/v3', '      username: admin'];
  const body = variant.lines(`      password: ${SECRET}`, '      ');
  const secretLine = head.length + body.findIndex((line) => line.includes(SECRET)) + 1;
  return { text: [...head, ...body, '      project_name: admin', ''].join('\n'), secretLine };
}

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The error's message names the file and the line, and holds no secret. */
function assertSafe(message: string, file: string, expectedLine: number | undefined): void {
  assert.ok(!message.includes(SECRET), `the secret was printed: ${message}`);
  assert.ok(!message.includes('Pl4nted'), `part of the secret was printed: ${message}`);
  assert.ok(message.includes(file), `the file is named: ${message}`);
  const line = /not valid YAML \(line (\d+)\)/.exec(message);
  assert.ok(line, `the line is named: ${message}`);
  if (expectedLine !== undefined) assert.equal(Number(line[1]), expectedLine, message);
}

async function messageOf(action: () => unknown): Promise<string> {
  try {
    await action();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  assert.fail('the broken file was accepted');
}

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, '-');

describe('a secret in a broken credential file is never printed', () => {
  for (const variant of VARIANTS) {
    it(`kubeconfig, ${variant.name}: every reader names file and line, no secret`, async () => {
      const { text, secretLine } = kubeconfig(variant);
      const path = write(`kubeconfig-${slug(variant.name)}.yaml`, text);
      const expected = variant.errorOffset === undefined ? undefined : secretLine + variant.errorOffset;
      const access = { source: 'kubeconfig' as const, path };
      const build = () => buildKubeConfig({ kube: access, mode: 'embedded' } as Parameters<typeof buildKubeConfig>[0]);
      assertSafe(await messageOf(() => checkKubeconfigFile(path)), path, expected);
      assertSafe(await messageOf(build), path, expected);
      assertSafe(await messageOf(() => loadKubeEndpoint(access, build)), path, expected);
    });

    it(`clouds.yaml, ${variant.name}: names file and line, no secret`, async () => {
      const { text, secretLine } = cloudsYaml(variant);
      const path = write(`clouds-${slug(variant.name)}.yaml`, text);
      const expected = variant.errorOffset === undefined ? undefined : secretLine + variant.errorOffset;
      const message = await messageOf(() =>
        loadOpenStackCredentials({ env: { OS_CLOUD: 'lab', OS_CLIENT_CONFIG_FILE: path }, resolveSecretRef: null }),
      );
      assertSafe(message, path, expected);
    });
  }

  it('the bus TLS key and trusted certificate: a broken file is named, its content never shown', async () => {
    const { certFile } = makeTestCertificate();
    const broken = [
      write('tls-plain.key', `${SECRET}\n`),
      write('tls-bad-pem.key', `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----\n`),
    ];
    for (const keyFile of broken) {
      const message = await messageOf(() => readServerTls({ certFile, keyFile }));
      assert.ok(!message.includes(SECRET) && message.includes(keyFile), message);
      const ca = await messageOf(() => readTrustedCa(keyFile));
      assert.ok(!ca.includes(SECRET) && ca.includes(keyFile), ca);
    }
  });

  it('the real commands print no secret (check, run, forwarder, the node agent, run with a broken TLS key)', async () => {
    const variant = VARIANTS[3] as Variant; // js-yaml's excerpt reaches three lines back
    const path = write('kubeconfig-cli.yaml', kubeconfig(variant).text);
    const { certFile } = makeTestCertificate();
    const goodKubeconfig = write('kubeconfig-good.yaml', kubeconfig({ name: 'fine', lines: (s) => [s] }).text);
    const runs: { args: string[]; env?: Record<string, string>; names: string }[] = [
      { args: ['check', '--kubeconfig', path], names: path },
      { args: ['run', '--metrics-address', '127.0.0.1:0', '--kubeconfig', path], names: path },
      { args: ['forwarder', '--metrics-address', '127.0.0.1:0', '--kubeconfig', path], names: path },
      {
        args: ['forwarder', '--node-agent', '--node', 'n', '--provider', 'azure', '--metrics-address', '127.0.0.1:0'],
        env: { KUBECONFIG: path },
        names: path,
      },
      {
        args: [
          'run',
          '--metrics-address',
          '127.0.0.1:0',
          '--bus-address',
          '127.0.0.1:0',
          '--kubeconfig',
          goodKubeconfig,
        ],
        env: {
          DRAINBRIDGE_BUS_KEY: 'k3y-for-tests-0123456789abcdef0123456789abcdef',
          DRAINBRIDGE_BUS_TLS_CERT: certFile,
          DRAINBRIDGE_BUS_TLS_KEY: join(dir, 'tls-bad-pem.key'),
        },
        names: 'DRAINBRIDGE_BUS_TLS_KEY',
      },
    ];
    const results = await Promise.all(runs.map((run) => runCli(run.args, run.env ?? {})));
    results.forEach((result, index) => {
      const run = runs[index] as (typeof runs)[number];
      const text = result.stdout + result.stderr;
      assert.equal(result.code, 2, `${run.args.join(' ')}: ${text}`);
      assert.ok(!text.includes(SECRET), `${run.args.join(' ')} printed the secret: ${text}`);
      assert.ok(text.includes(run.names), `${run.args.join(' ')} names ${run.names}: ${text}`);
    });
  });
});
