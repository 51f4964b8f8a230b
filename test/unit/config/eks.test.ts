/**
 * The `eks` access source: tokens in aws-iam-authenticator's format (checked against its verifier's
 * rules and an independent SigV4 computation), refreshed before STS stops honouring them, and put on
 * every request a client-node API client makes (against a real HTTPS server).
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  buildEksKubeConfig,
  EksTokenSource,
  presignEksToken,
  TOKEN_REFRESH_AFTER_MS,
} from '../../../lib/config/eks.ts';
import { buildKubeConfig, loadConfig } from '../../../lib/config/index.ts';
import { generateServingCertificate } from '../../../sim/tls.ts';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE+token/with=chars',
};
const SIGNING_DATE = new Date('2026-11-21T10:00:00.000Z');
/** aws-iam-authenticator's verifier refuses any other query parameter (pkg/token/token.go). */
const ALLOWED_PARAMS = new Set([
  'action',
  'version',
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-signedheaders',
]);

/** What the API server's authenticator does first: strip the prefix, base64url-decode, parse the URL. */
function decodeToken(token: string): URL {
  assert.ok(token.startsWith('k8s-aws-v1.'), 'token prefix');
  const body = token.slice('k8s-aws-v1.'.length);
  assert.match(body, /^[A-Za-z0-9_-]+$/, 'base64url without padding');
  return new URL(Buffer.from(body, 'base64url').toString('utf8'));
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();
const rfc3986 = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** SigV4 for a presigned GET, written from the specification (not with the signer under test). */
function recomputeSignature(url: URL, clusterName: string, secretAccessKey: string): string {
  const query = [...url.searchParams]
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => `${rfc3986(key)}=${rfc3986(value)}`)
    .sort()
    .join('&');
  const signedHeaders = url.searchParams.get('X-Amz-SignedHeaders') ?? '';
  const headers = `host:${url.host}\nx-k8s-aws-id:${clusterName}\n`;
  const canonicalRequest = ['GET', '/', query, headers, signedHeaders, sha256Hex('')].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
  const [, day = '', region = '', service = ''] = (url.searchParams.get('X-Amz-Credential') ?? '').split('/');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
  return hmac(key, stringToSign).toString('hex');
}

/** A base64 string as long as a Lambda role's session token (~1.2 KB), deterministic. */
function lambdaSizedSessionToken(): string {
  const bytes = Buffer.concat(Array.from({ length: 15 }, (_, i) => createHash('sha512').update(String(i)).digest()));
  return `IQoJ${bytes.toString('base64')}`.slice(0, 1200);
}

describe('presignEksToken', () => {
  it('makes the token aws-iam-authenticator expects, with a signature that verifies', async () => {
    const minted = await presignEksToken({
      clusterName: 'prod-eu',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      signingDate: SIGNING_DATE,
    });
    const url = decodeToken(minted.token);
    assert.equal(url.protocol, 'https:');
    assert.equal(url.host, 'sts.eu-west-1.amazonaws.com');
    assert.equal(url.pathname, '/');
    const q = url.searchParams;
    assert.equal(q.get('Action'), 'GetCallerIdentity');
    assert.equal(q.get('Version'), '2011-06-15');
    assert.equal(q.get('X-Amz-Expires'), '60');
    assert.equal(q.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    assert.equal(q.get('X-Amz-Date'), '20261121T100000Z');
    assert.equal(q.get('X-Amz-Credential'), 'AKIDEXAMPLE/20261121/eu-west-1/sts/aws4_request');
    assert.equal(q.get('X-Amz-Security-Token'), CREDENTIALS.sessionToken);
    assert.deepEqual(q.get('X-Amz-SignedHeaders')?.split(';'), ['host', 'x-k8s-aws-id']);
    for (const key of q.keys()) assert.ok(ALLOWED_PARAMS.has(key.toLowerCase()), `query parameter ${key}`);
    assert.equal(q.getAll('X-Amz-Signature').length, 1);
    assert.equal(q.get('X-Amz-Signature'), recomputeSignature(url, 'prod-eu', CREDENTIALS.secretAccessKey));
    // The recomputation is not vacuous: another cluster name or another key gives another signature.
    assert.notEqual(q.get('X-Amz-Signature'), recomputeSignature(url, 'other', CREDENTIALS.secretAccessKey));
    assert.notEqual(q.get('X-Amz-Signature'), recomputeSignature(url, 'prod-eu', 'another-secret'));
    assert.equal(minted.expiresAt.toISOString(), '2026-11-21T10:15:00.000Z');
  });

  it('uses the China partition host for cn- regions and omits the session token when there is none', async () => {
    const { token } = await presignEksToken({
      clusterName: 'c1',
      region: 'cn-north-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-key-1' },
      signingDate: SIGNING_DATE,
    });
    const url = decodeToken(token);
    assert.equal(url.host, 'sts.cn-north-1.amazonaws.com.cn');
    assert.equal(url.searchParams.has('X-Amz-Security-Token'), false);
    assert.equal(url.searchParams.get('X-Amz-Signature'), recomputeSignature(url, 'c1', 'secret-key-1'));
  });

  it('stays under the 4 KiB token limit of the verifier with a Lambda-sized session token', async () => {
    const { token } = await presignEksToken({
      clusterName: 'a-cluster-name-of-a-realistic-length',
      region: 'ap-southeast-2',
      credentials: { ...CREDENTIALS, sessionToken: lambdaSizedSessionToken() },
      signingDate: SIGNING_DATE,
    });
    assert.ok(token.length <= 4096, `token is ${token.length} bytes`);
  });
});

/** A clock the test moves by hand. */
function manualClock(start: Date) {
  let nowMs = start.getTime();
  return { now: () => new Date(nowMs), advance: (ms: number) => (nowMs += ms) };
}

describe('EksTokenSource', () => {
  it('reuses a token until it is due, then mints a new one; concurrent callers share one mint', async () => {
    const clock = manualClock(SIGNING_DATE);
    let fetches = 0;
    const source = new EksTokenSource({
      clusterName: 'prod-eu',
      region: 'eu-west-1',
      now: clock.now,
      credentials: async () => {
        fetches++;
        return CREDENTIALS;
      },
    });
    const [a, b] = await Promise.all([source.token(), source.token()]);
    assert.equal(a, b);
    assert.equal(fetches, 1);
    clock.advance(TOKEN_REFRESH_AFTER_MS - 1);
    assert.equal(await source.token(), a);
    clock.advance(1);
    const c = await source.token();
    assert.notEqual(c, a);
    assert.equal(fetches, 2);
    assert.equal(decodeToken(c).searchParams.get('X-Amz-Date'), '20261121T101000Z');
  });

  it('retries a failing credential provider, then fails as TransientError naming the cluster', async () => {
    let attempts = 0;
    const source = new EksTokenSource({
      clusterName: 'prod-eu',
      region: 'eu-west-1',
      sleep: async () => {},
      credentials: async () => {
        attempts++;
        throw new Error('connect ECONNREFUSED 169.254.170.2:80');
      },
    });
    await assert.rejects(source.token(), (error: Error) => {
      assert.equal(error.name, 'TransientError');
      assert.match(error.message, /cluster prod-eu: no AWS credentials .*ECONNREFUSED/);
      return true;
    });
    assert.equal(attempts, 3);
  });
});

describe('buildEksKubeConfig', () => {
  const certificate = generateServingCertificate();

  it('sends a fresh token on every API request, refreshed when due', {
    skip: !certificate && 'no openssl',
  }, async () => {
    assert.ok(certificate);
    const seen: string[] = [];
    const server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const clock = manualClock(SIGNING_DATE);
      const source = new EksTokenSource({
        clusterName: 'prod-eu',
        region: 'eu-west-1',
        now: clock.now,
        credentials: async () => CREDENTIALS,
      });
      const access = {
        clusterName: 'prod-eu',
        region: 'eu-west-1',
        server: `https://127.0.0.1:${port}`,
        caData: Buffer.from(certificate.cert).toString('base64'),
      };
      const core = buildEksKubeConfig(access, source).makeApiClient(CoreV1Api);
      const namespace = await core.readNamespace({ name: 'default' });
      assert.equal(namespace.metadata?.name, 'default');
      await core.readNamespace({ name: 'default' });
      clock.advance(TOKEN_REFRESH_AFTER_MS);
      await core.readNamespace({ name: 'default' });
      assert.equal(seen.length, 3);
      for (const header of seen) assert.match(header, /^Bearer k8s-aws-v1\.[A-Za-z0-9_-]+$/);
      assert.equal(seen[0], seen[1]);
      assert.notEqual(seen[1], seen[2]);
      const url = decodeToken((seen[2] ?? '').slice('Bearer '.length));
      assert.equal(url.searchParams.get('X-Amz-Date'), '20261121T101000Z');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('eks configuration', () => {
  const base = {
    DRAINBRIDGE_MODE: 'aws',
    DRAINBRIDGE_KUBE_ACCESS: 'eks',
    DRAINBRIDGE_EKS_CLUSTER: 'prod-eu',
    DRAINBRIDGE_KUBE_SERVER: 'https://ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
    DRAINBRIDGE_KUBE_CA: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'),
  };

  it('reads cluster, endpoint and CA, with the region from AWS_REGION unless given', () => {
    assert.deepEqual(loadConfig({ ...base, AWS_REGION: 'eu-west-1' }).kube, {
      source: 'eks',
      clusterName: 'prod-eu',
      region: 'eu-west-1',
      server: base.DRAINBRIDGE_KUBE_SERVER,
      caData: base.DRAINBRIDGE_KUBE_CA,
    });
    const explicit = loadConfig({ ...base, AWS_REGION: 'eu-west-1', DRAINBRIDGE_EKS_REGION: 'us-east-2' }).kube;
    assert.equal(explicit.source === 'eks' && explicit.region, 'us-east-2');
  });

  it('names every missing or malformed variable', () => {
    assert.throws(() => loadConfig({ DRAINBRIDGE_MODE: 'aws', DRAINBRIDGE_KUBE_ACCESS: 'eks' }), {
      name: 'ConfigError',
      message:
        /DRAINBRIDGE_EKS_CLUSTER: is required[\s\S]*DRAINBRIDGE_KUBE_SERVER: is required[\s\S]*DRAINBRIDGE_KUBE_CA: is required[\s\S]*DRAINBRIDGE_EKS_REGION: is required/,
    });
    assert.throws(
      () => loadConfig({ ...base, DRAINBRIDGE_EKS_CLUSTER: 'bad name!', DRAINBRIDGE_EKS_REGION: 'europe' }),
      {
        name: 'ConfigError',
        message:
          /DRAINBRIDGE_EKS_CLUSTER: must be an EKS cluster name[\s\S]*DRAINBRIDGE_EKS_REGION: must be an AWS region/,
      },
    );
    assert.throws(() => loadConfig({ ...base, AWS_REGION: 'eu-west-1', DRAINBRIDGE_KUBE_SERVER: 'http://10.0.0.1' }), {
      name: 'ConfigError',
      message: /DRAINBRIDGE_KUBE_SERVER: must be an https:\/\/ URL with DRAINBRIDGE_KUBE_ACCESS=eks/,
    });
  });

  it('points an exec-plugin kubeconfig in Lambda mode to the eks source', async () => {
    const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }]
current-context: ctx
users: [{ name: u, user: { exec: { apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [eks, get-token] } } }]
`;
    await assert.rejects(
      buildKubeConfig(
        { mode: 'aws', kube: { source: 'secret', kubeconfigRef: 'secretsmanager:kube' } },
        async () => kubeconfig,
      ),
      {
        name: 'ConfigError',
        message: /exec plugin, which cannot run in Lambda; for EKS set DRAINBRIDGE_KUBE_ACCESS=eks/,
      },
    );
  });
});
