/**
 * A self-signed certificate for the bus endpoint's tests, made as docs/notices.md tells a reader to make
 * one (openssl, the Service's name and here 127.0.0.1 as subject alternative names), in a fresh directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The private key's PEM text (to check no log line carries it). */
  readonly keyPem: string;
}

export function makeTestCertificate(
  altNames = 'DNS:drainbridge-run-bus.drainbridge.svc,IP:127.0.0.1',
): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'drainbridge-bus-tls-'));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-days',
      '30',
      '-nodes',
      '-subj',
      '/CN=drainbridge-run-bus',
      '-addext',
      `subjectAltName=${altNames}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { dir, certFile, keyFile, keyPem: readFileSync(keyFile, 'utf8') };
}
