/**
 * The named exports of a CommonJS package loaded with a dynamic `import()`. Node gives them as named
 * exports (its CommonJS lexer finds them); in an ES-module bundle (the image's, scripts/bundle.ts) esbuild
 * follows Node's rule for CommonJS strictly and gives the exports object as `default` only — so
 * `(await import('@aws-sdk/client-eventbridge')).PutEventsCommand` was undefined there, and every
 * PutEvents of the image's forwarder failed with "not a constructor". `expected`: one export the caller
 * uses, to tell the two shapes apart and to fail naming it when neither has it.
 */
export function namedExports<T extends object>(imported: T, expected: keyof T & string): T {
  if (expected in imported) return imported;
  const exportsObject = (imported as { readonly default?: unknown }).default;
  if (typeof exportsObject === 'object' && exportsObject !== null && expected in exportsObject) {
    return exportsObject as T;
  }
  throw new TypeError(`the loaded module has no export "${expected}" (neither named nor under default)`);
}
