/**
 * A throwaway self-signed certificate for 127.0.0.1. kubectl (client-go) sends bearer tokens only
 * over TLS, so the simulator serves HTTPS and puts this certificate in the kubeconfig as the CA.
 * Made with the machine's `openssl` (Node has no X.509 writer); the key never leaves memory after
 * the temporary directory is removed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM key and certificate. */
export interface ServingCertificate {
  key: string;
  cert: string;
}

/**
 * Generates a P-256 self-signed certificate for 127.0.0.1/localhost and `dnsNames` (a webhook's
 * `<service>.<namespace>.svc`); undefined when `openssl` is unavailable.
 */
export function generateServingCertificate(dnsNames: readonly string[] = []): ServingCertificate | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-sim-tls-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    const result = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '30',
        '-subj',
        '/CN=drainbridge-sim',
        '-addext',
        ['subjectAltName=IP:127.0.0.1,DNS:localhost', ...dnsNames.map((name) => `DNS:${name}`)].join(','),
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-keyout',
        keyPath,
        '-out',
        certPath,
      ],
      { timeout: 10_000, stdio: 'ignore' },
    );
    if (result.error || result.status !== 0) return undefined;
    return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
