/**
 * A private CA and a serving certificate signed by it, made in-process (node:crypto keys and signatures,
 * the X.509 DER written here: Node has no certificate writer, and the container image has no `openssl`).
 * For the NodeMaintenance admission webhook: the API server trusts the CA (the webhook configuration's
 * `caBundle`) and checks the serving certificate's DNS names against the Service it calls
 * (`<service>.<namespace>.svc`). P-256 keys, ECDSA with SHA-256 — what the API server's TLS accepts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/** PEM texts: the CA certificate, the serving certificate and its private key (PKCS#8). */
export interface WebhookCertificates {
  readonly caCert: string;
  readonly cert: string;
  readonly key: string;
}

// --- DER, the few types a certificate needs ---

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const explicit = (n: number, item: Buffer) => tlv(0xa0 + n, item);
const octets = (value: Buffer) => tlv(0x04, value);
const bits = (value: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), value);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** A positive INTEGER from big-endian bytes. */
function integer(value: Buffer): Buffer {
  return tlv(0x02, value[0] !== undefined && value[0] & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

/** UTCTime before 2050, GeneralizedTime from then (RFC 5280 4.1.2.5). */
function time(at: Date): Buffer {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const ECDSA_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const name = (commonName: string) => sequence(set(sequence(oid('2.5.4.3'), utf8(commonName))));
const extension = (id: string, critical: boolean, value: Buffer) =>
  sequence(oid(id), ...(critical ? [TRUE] : []), octets(value));

interface Subject {
  readonly commonName: string;
  readonly publicKey: KeyObject;
  /** A CA (signs certificates) or a TLS server certificate for `dnsNames`. */
  readonly ca: boolean;
  readonly dnsNames?: readonly string[];
}

function extensionsOf(subject: Subject): Buffer {
  if (subject.ca) {
    return sequence(
      extension('2.5.29.19', true, sequence(TRUE)),
      // keyUsage: digitalSignature, keyCertSign
      extension('2.5.29.15', true, bits(Buffer.from([0x84]), 2)),
    );
  }
  const names = (subject.dnsNames ?? []).map((dns) => tlv(0x82, Buffer.from(dns, 'ascii')));
  return sequence(
    extension('2.5.29.19', true, sequence()),
    extension('2.5.29.15', true, bits(Buffer.from([0x80]), 7)),
    // extKeyUsage: serverAuth
    extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))),
    extension('2.5.29.17', false, sequence(...names)),
  );
}

interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

function certificate(subject: Subject, issuer: { name: string; key: KeyObject }, validity: Validity): string {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 1) & 0x7f) | 0x01;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(issuer.name),
    sequence(time(validity.notBefore), time(validity.notAfter)),
    name(subject.commonName),
    subject.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensionsOf(subject)),
  );
  const der = sequence(tbs, ECDSA_SHA256, bits(sign('sha256', tbs, issuer.key)));
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`;
}

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/** A new CA, and a serving certificate for `dnsNames` signed by it, valid from an hour ago for `days`. */
export function generateWebhookCertificates(
  dnsNames: readonly string[],
  now: Date = new Date(),
  days = 3650,
): WebhookCertificates {
  const validity = {
    notBefore: new Date(now.getTime() - 3_600_000),
    notAfter: new Date(now.getTime() + days * 86_400_000),
  };
  const ca = p256();
  const issuer = { name: 'drainbridge-nodemaintenance-webhook-ca', key: ca.privateKey };
  const caCert = certificate({ commonName: issuer.name, publicKey: ca.publicKey, ca: true }, issuer, validity);
  const leaf = p256();
  const subject = { commonName: dnsNames[0] ?? 'drainbridge', publicKey: leaf.publicKey, ca: false, dnsNames };
  const cert = certificate(subject, issuer, validity);
  return { caCert, cert, key: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Does `key` belong to the certificate's public key (a Secret whose parts were mixed up is not used)? */
export function keyMatches(certPublicKey: KeyObject, keyPem: string): boolean {
  const fromKey = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
  return fromKey.equals(certPublicKey.export({ type: 'spki', format: 'der' }));
}
