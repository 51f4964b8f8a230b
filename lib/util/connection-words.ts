/**
 * Why a connection failed, in words a person acts on instead of an errno code: shared by the CLI's
 * presentation of Kubernetes API failures and the preflight's Nova check. Pure.
 */

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|TLS/;

/** Why no answer came (`code`: the network error's code, when there is one). */
export function connectionWords(code: string | undefined, message: string): string {
  if (code === 'ECONNREFUSED') return 'nothing listens there (connection refused)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name does not resolve';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was cut';
  if (code === 'ETIMEDOUT' || /abort|timeout/i.test(message)) return 'no answer in time';
  if (code === 'EPROTO' || /wrong version number|packet length too long/i.test(message)) {
    return 'it does not speak TLS there (is the server an http:// address?)';
  }
  if (code && TLS_CODE.test(code)) {
    return `its TLS certificate is not trusted (${code}): check the kubeconfig's certificate-authority-data`;
  }
  return code ? `the connection failed (${code})` : 'the connection failed';
}
