/** The admission chain: hooks run in the order added; the first verdict wins. */
import type { AdmissionChain, AdmissionHook } from './types.ts';

/** Creates an empty chain. */
export function createAdmissionChain(): AdmissionChain {
  const hooks: AdmissionHook[] = [];
  return {
    add: (hook) => {
      hooks.push(hook);
      return () => {
        const index = hooks.indexOf(hook);
        if (index >= 0) hooks.splice(index, 1);
      };
    },
    run: async (request) => {
      for (const hook of [...hooks]) {
        const verdict = await hook.admit(request);
        if (verdict) return verdict;
      }
      return undefined;
    },
  };
}
