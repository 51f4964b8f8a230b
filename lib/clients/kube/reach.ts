/**
 * Why a call to the Kubernetes API got no answer, in words a person acts on — never a raw
 * `connect ECONNREFUSED` or an HTTP library's dump. Pure.
 *
 * The client decides what each means from whether the server has answered it before: on the first
 * contact, a refused connection, an unknown host or a certificate that does not match is almost always
 * configuration (the wrong kubeconfig, context or server; a cluster that was re-created), so it is
 * reported at once as ClusterUnreachable; once the server has answered, the same faults mean it was
 * working and failed, and are retried as TransientError. A certificate that stops matching is never
 * retried: waiting does not change a certificate.
 */
import { connectionWords } from '../../util/connection-words.ts';

export type NoAnswerKind = 'refused' | 'unknown-host' | 'tls' | 'timeout' | 'reset' | 'other';

/** Node's TLS verification codes (and the protocol errors of speaking TLS to a plain-HTTP port). */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function codeOf(error: Error): string {
  const own = (error as { code?: unknown }).code;
  const cause = (error.cause as { code?: unknown } | undefined)?.code;
  if (typeof own === 'string') return own;
  return typeof cause === 'string' ? cause : '';
}

/** What kind of "no answer" this is. */
export function noAnswerKind(error: Error): NoAnswerKind {
  const code = codeOf(error);
  if (error.name === 'AbortError' || error.name === 'TimeoutError' || code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'unknown-host';
  // Before the message test: a connection cut during the TLS handshake (ECONNRESET, "Client network socket
  // disconnected before secure TLS connection was established") is a cut, not a certificate of another cluster.
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return 'reset';
  if (TLS_CODES.has(code) || /certificate|SSL|TLS/i.test(error.message)) return 'tls';
  return 'other';
}

/** The server's host, for sentences (`no-such-host.invalid`). */
function hostOf(server: string): string {
  try {
    return new URL(server).hostname;
  } catch {
    return server;
  }
}

/** The error code a sentence is worded from (lib/util/connection-words.ts: one vocabulary with the CLI). */
export function noAnswerCode(error: Error): string {
  return codeOf(error);
}

const PLAIN_HTTP = new Set(['EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER']);

/**
 * One sentence: where, why in main's connection words (the same the CLI and the Nova check use), and on
 * the first contact what to check. `code`: the network error's code, when there is one.
 */
export function describeNoAnswer(
  kind: NoAnswerKind,
  server: string,
  contact: { readonly firstContact: boolean; readonly timeoutMs: number; readonly code?: string },
): string {
  const { firstContact, timeoutMs, code = '' } = contact;
  const where = `cannot reach the Kubernetes API server at ${server}`;
  const check = firstContact
    ? ': check the server address and context in your kubeconfig (or DRAINBRIDGE_KUBE_SERVER), and that the cluster is up'
    : '';
  switch (kind) {
    case 'refused':
      return `${where}: ${connectionWords('ECONNREFUSED', '')}${check}`;
    case 'unknown-host':
      return `${where}: ${connectionWords('ENOTFOUND', '')} (${hostOf(server)})${check}`;
    case 'tls':
      if (PLAIN_HTTP.has(code)) return `${where}: ${connectionWords('EPROTO', '')}`;
      return `${where}: ${connectionWords(code || 'CERT_UNTRUSTED', '')}; the kubeconfig belongs to another cluster, or the cluster was re-created (fetch a fresh kubeconfig)`;
    case 'timeout':
      return `${where}: it did not answer within ${Math.round(timeoutMs / 1000)} s${check}`;
    case 'reset':
      return `${where}: ${connectionWords('ECONNRESET', '')} before it answered`;
    default:
      return `${where}: ${connectionWords(code || undefined, '')}${check}`;
  }
}

/** Whether this kind is reported at once on the first contact (never retried then). */
export function failsFastOnFirstContact(kind: NoAnswerKind): boolean {
  return kind === 'refused' || kind === 'unknown-host' || kind === 'tls' || kind === 'timeout';
}
