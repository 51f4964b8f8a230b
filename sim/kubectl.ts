/**
 * Finding the real kubectl, the simulator's fidelity peer (the machine image's kubectl picks its client
 * version from the server's /version). Used by the fidelity suite and the benchmarks.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The kubectl binary: `$KUBECTL_BINARY` when set (only that one is tried), else /usr/bin/kubectl, else
 * the first on PATH; undefined when there is none.
 */
export function findKubectl(): string | undefined {
  const override = process.env.KUBECTL_BINARY;
  const candidates = override
    ? [override]
    : ['/usr/bin/kubectl', ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'kubectl'))];
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
