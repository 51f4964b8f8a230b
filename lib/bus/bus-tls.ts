/**
 * The TLS material of `drainbridge run`'s bus endpoint, read from the files a Kubernetes TLS Secret
 * mounts (tls.crt, tls.key) — run's certificate and key, and for the node agent the certificate it
 * trusts. Read once at start; a problem names the variable, the path and the reason, never the
 * file's content (the key file holds a secret, so no parser excerpt of it is ever shown).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../errors/index.ts';
import type { BusServerTls } from './bus-key.ts';

/** A certificate and its key, PEM. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
}

function readPem(variable: string, path: string): Buffer {
  let text: Buffer;
  try {
    text = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError([{ path: variable, message: `cannot read ${path} (${code})` }]);
  }
  if (!text.includes('-----BEGIN ')) {
    throw new ConfigError([{ path: variable, message: `${path} holds no PEM block (-----BEGIN …)` }]);
  }
  return text;
}

/** OpenSSL's reason without anything of the input (its messages carry none, but only the code is kept). */
function reasonOf(error: unknown): string {
  const { code, reason } = error as { code?: string; reason?: string };
  return reason ?? code ?? 'not a usable certificate and key';
}

/** run's certificate and key, checked to belong together; undefined when plain HTTP is allowed. */
export function readServerTls(tls: BusServerTls): TlsMaterial | undefined {
  if (tls === 'plaintext') return undefined;
  const material = {
    cert: readPem('DRAINBRIDGE_BUS_TLS_CERT', tls.certFile),
    key: readPem('DRAINBRIDGE_BUS_TLS_KEY', tls.keyFile),
  };
  try {
    createSecureContext(material);
  } catch (error) {
    throw new ConfigError([
      {
        path: 'DRAINBRIDGE_BUS_TLS_KEY',
        message: `${tls.keyFile} and ${tls.certFile} are not a certificate and its private key (${reasonOf(error)})`,
      },
    ]);
  }
  return material;
}

/** The certificate(s) a node agent trusts for run's endpoint; undefined: the system's CAs. */
export function readTrustedCa(caFile: string | undefined): Buffer | undefined {
  if (caFile === undefined) return undefined;
  const ca = readPem('DRAINBRIDGE_BUS_CA', caFile);
  try {
    // A file that is no certificate would be ignored by TLS (trusting nothing): refused here instead.
    new X509Certificate(ca);
    createSecureContext({ ca });
  } catch (error) {
    throw new ConfigError([
      { path: 'DRAINBRIDGE_BUS_CA', message: `${caFile}: not a certificate (${reasonOf(error)})` },
    ]);
  }
  return ca;
}
