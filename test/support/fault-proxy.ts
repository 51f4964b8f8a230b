/**
 * A TLS proxy in front of the simulator for faults the API server itself cannot show: a request that
 * never gets an answer (the client's timeout has to end it) and a connection reset before the answer —
 * per call kind, reads included (the simulator's admission hooks only see writes). It terminates TLS with
 * its own throwaway certificate (put in the kubeconfig it renders) and forwards everything else to the
 * simulator unchanged, watch streams included.
 */
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Simulator } from '../../sim/index.ts';
import { renderKubeconfig } from '../../sim/kubeconfig.ts';
import { generateServingCertificate } from '../../sim/tls.ts';

export interface ProxyRule {
  readonly method?: string;
  /** Matched against the request's path and query. */
  readonly path: RegExp;
  /** `hang`: never answer (until the client gives up); `reset`: destroy the connection. */
  readonly action: 'hang' | 'reset';
  /** How many matching requests it applies to (Infinity: until removed). */
  times: number;
  hits: number;
}

export interface FaultProxy {
  readonly url: string;
  /** A kubeconfig for the proxy with `token`. */
  kubeconfig(token: string): string;
  /** Adds a rule; returns it (its `hits` count what it did). */
  add(rule: Omit<ProxyRule, 'hits' | 'times'> & { times?: number }): ProxyRule;
  close(): Promise<void>;
}

export async function startFaultProxy(sim: Simulator): Promise<FaultProxy> {
  const certificate = generateServingCertificate();
  if (!certificate) throw new Error('openssl is needed for the fault proxy certificate');
  const target = new URL(sim.url);
  const rules: ProxyRule[] = [];
  const hung = new Set<() => void>();
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const rule = rules.find(
      (r) => r.hits < r.times && (!r.method || r.method === req.method) && r.path.test(req.url ?? ''),
    );
    if (rule) {
      rule.hits++;
      if (rule.action === 'reset') {
        req.socket.destroy();
        return;
      }
      const release = () => res.destroy();
      hung.add(release);
      res.on('close', () => hung.delete(release));
      return;
    }
    const upstream = httpsRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        rejectUnauthorized: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeconfig: (token) => renderKubeconfig(url, token, certificate.cert),
    add: (rule) => {
      const added: ProxyRule = { ...rule, times: rule.times ?? Number.POSITIVE_INFINITY, hits: 0 };
      rules.push(added);
      return added;
    },
    close: () =>
      new Promise((resolve) => {
        for (const release of hung) release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
