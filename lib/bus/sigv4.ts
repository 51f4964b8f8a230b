/**
 * AWS Signature Version 4 checked on the receiving side, for the bus endpoint of `drainbridge run`
 * (bus-endpoint.ts): the node agents sign their PutEvents calls with the AWS SDK, as they would for
 * EventBridge, with a key both sides read from one Secret. Chosen over a bearer token because the key
 * never travels (only an HMAC over the request does), the body cannot be altered on the way (its hash
 * is signed), and a captured request stops being accepted after five minutes. Pure apart from the clock
 * the caller passes; every refusal names what was wrong and never the key or the signature.
 *
 * The algorithm (AWS "Create a signed AWS API request"): a canonical request (method, path, query, the
 * signed headers, the body's SHA-256), a string to sign (algorithm, X-Amz-Date, the credential scope,
 * the canonical request's hash), and an HMAC chain from `AWS4<key>` over date, region, service and
 * `aws4_request`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SIGV4_ALGORITHM = 'AWS4-HMAC-SHA256';
/** EventBridge's signing name: what the SDK's EventBridge client puts in the credential scope. */
export const EVENTBRIDGE_SIGNING_SERVICE = 'events';
/** How far X-Amz-Date may be from the receiver's clock (AWS: five minutes). */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

export interface SignedRequest {
  readonly method: string;
  /** The path as received, without the query (e.g. `/`). */
  readonly path: string;
  /** The query string without `?` (`''` when none). */
  readonly query: string;
  /** Lower-case names; values as received (Node joins repeated headers with `, `). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/** A key the receiver accepts, known by its access key id. */
export interface SigningKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Why a request was refused, in EventBridge's error codes (so the SDK reports them as AWS would). */
export type SigV4Refusal = {
  readonly ok: false;
  readonly code:
    | 'MissingAuthenticationTokenException'
    | 'IncompleteSignatureException'
    | 'UnrecognizedClientException'
    | 'InvalidSignatureException';
  readonly message: string;
};
export type SigV4Result =
  | {
      readonly ok: true;
      readonly accessKeyId: string;
      /** The verified signature (hex) and its X-Amz-Date (ms): what replay protection remembers. */
      readonly signature?: string;
      readonly signedAt?: number;
    }
  | SigV4Refusal;

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** The signing key of `secret` for one day, region and service. */
function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

/** RFC 3986 encoding as SigV4 wants it (unreserved characters kept, everything else %XX upper-case). */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Query parameters sorted by name then value, each encoded once. */
function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = decodeURIComponent((at < 0 ? pair : pair.slice(0, at)).replace(/\+/g, ' '));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, ' '));
      return [uriEncode(name), uriEncode(value)] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** The path with each segment encoded twice, as SigV4 does for every service but S3. */
function canonicalPath(path: string): string {
  return path
    .split('/')
    .map((segment) => uriEncode(uriEncode(decodeURIComponent(segment))))
    .join('/');
}

interface ParsedAuthorization {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

function refuse(code: SigV4Refusal['code'], message: string): SigV4Refusal {
  return { ok: false, code, message };
}

function parseAuthorization(header: string): ParsedAuthorization | SigV4Refusal {
  if (!header.startsWith(`${SIGV4_ALGORITHM} `)) {
    return refuse('IncompleteSignatureException', `the Authorization header must use ${SIGV4_ALGORITHM}`);
  }
  const fields = new Map<string, string>();
  for (const part of header.slice(SIGV4_ALGORITHM.length + 1).split(',')) {
    const at = part.indexOf('=');
    if (at > 0) fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const credential = fields.get('Credential')?.split('/');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (credential?.length !== 5 || credential[4] !== 'aws4_request' || !signedHeaders || !signature) {
    return refuse(
      'IncompleteSignatureException',
      'the Authorization header needs Credential=<key id>/<date>/<region>/<service>/aws4_request, SignedHeaders and Signature',
    );
  }
  const [accessKeyId = '', date = '', region = '', service = ''] = credential;
  if (!/^[0-9a-f]{64}$/.test(signature)) {
    return refuse('IncompleteSignatureException', 'the Signature must be 64 hexadecimal digits');
  }
  return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(';'), signature };
}

/** `20240101T120000Z` → epoch ms, or undefined. */
function parseAmzDate(text: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Checks a request's SigV4 signature against the keys this receiver holds. `service` is the signing
 * name the scope must carry; any region is accepted (the receiver is not in one).
 */
export function verifySigV4(
  request: SignedRequest,
  keys: readonly SigningKey[],
  options: { readonly service: string; readonly now: number },
): SigV4Result {
  const header = request.headers.authorization;
  if (!header)
    return refuse('MissingAuthenticationTokenException', 'the request is not signed (no Authorization header)');
  const auth = parseAuthorization(header);
  if ('ok' in auth) return auth;
  const key = keys.find((k) => k.accessKeyId === auth.accessKeyId);
  if (!key) {
    return refuse(
      'UnrecognizedClientException',
      `access key id ${JSON.stringify(auth.accessKeyId.slice(0, 64))} is not this endpoint's: the sender holds a different DRAINBRIDGE_BUS_KEY`,
    );
  }
  if (auth.service !== options.service) {
    return refuse(
      'InvalidSignatureException',
      `the credential scope names service ${auth.service}, not ${options.service}`,
    );
  }
  const amzDate = request.headers['x-amz-date'] ?? '';
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined || amzDate.slice(0, 8) !== auth.date) {
    return refuse(
      'IncompleteSignatureException',
      'X-Amz-Date must be yyyyMMddTHHmmssZ and on the credential scope date',
    );
  }
  for (const required of ['host', 'x-amz-date']) {
    if (!auth.signedHeaders.includes(required)) {
      return refuse('IncompleteSignatureException', `SignedHeaders must include ${required}`);
    }
  }
  if (Math.abs(options.now - signedAt) > MAX_CLOCK_SKEW_MS) {
    // The SDK recognises this code, reads the answer's Date header, corrects its clock offset and retries.
    return refuse(
      'InvalidSignatureException',
      `Signature expired: ${amzDate} is more than 5 minutes from the receiver's time ${new Date(options.now).toISOString()}`,
    );
  }
  const bodyHash = sha256Hex(request.body);
  const declaredHash = request.headers['x-amz-content-sha256'];
  if (declaredHash !== undefined && declaredHash !== bodyHash) {
    return refuse('InvalidSignatureException', 'X-Amz-Content-Sha256 does not match the body');
  }
  const canonicalHeaders = auth.signedHeaders
    .map((name) => `${name}:${(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(request.path),
    canonicalQuery(request.query),
    canonicalHeaders,
    auth.signedHeaders.join(';'),
    bodyHash,
  ].join('\n');
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = [SIGV4_ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const expected = createHmac('sha256', signingKey(key.secretAccessKey, auth.date, auth.region, auth.service))
    .update(stringToSign)
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(auth.signature, 'hex'))) {
    return refuse(
      'InvalidSignatureException',
      'the request signature does not match: signed with another key, or altered on the way',
    );
  }
  return { ok: true, accessKeyId: key.accessKeyId, signature: auth.signature, signedAt };
}
