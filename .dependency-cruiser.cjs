/**
 * The layering check (`npm run check:layers`, part of `npm run lint`): which folder may import which.
 *
 *   bin → cli → embedded → functions → lib      (and sim/, bench/, test/, scripts/ beside them)
 *
 * lib/ is the domain: it never reaches up into the wiring that uses it. functions/ are thin Lambda
 * shells over lib/. No import cycles, neither between files nor between lib/'s folders (a folder cycle
 * such as config → nova → openstack → config means none of them can be understood or moved alone).
 * Type-only imports count: they are dependencies of the design even when erased at run time.
 */
const OUTSIDE_LIB = '^(functions|embedded|cli|sim|bench|soak|test|scripts|bin)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Files must not import each other in a cycle (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-lib-folder-cycles',
      comment: "lib/'s folders must not depend on each other in a cycle (e.g. config → nova → openstack → config).",
      severity: 'error',
      scope: 'folder',
      from: { path: '^lib/' },
      to: { path: '^lib/', circular: true },
    },
    {
      name: 'lib-stays-below',
      comment:
        'lib/ is the domain: it never imports the functions, the embedded runtime, the CLI, the simulator, benchmarks, tests or scripts.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: OUTSIDE_LIB },
    },
    {
      name: 'functions-import-only-lib',
      comment: 'A Lambda handler is a thin shell over lib/ (npm packages and Node built-ins aside).',
      severity: 'error',
      from: { path: '^functions/' },
      to: { pathNot: '^(lib/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    {
      name: 'admission-through-its-facade',
      comment:
        "Admission's Lease records (lib/admission/records.ts) are read and written only inside lib/admission/: everything else (the workflow, status, repair, run) goes through its facade, lib/admission/index.ts. Tests may reach a part to test it.",
      severity: 'error',
      from: { pathNot: '^(lib/admission/|test/)' },
      to: { path: '^lib/admission/', pathNot: '^lib/admission/index\\.ts$' },
    },
    {
      name: 'owner-claim-through-ownership',
      comment:
        'The owner claim on an Evacuation record (lib/workflow/owner-record.ts) is read and written only by lib/workflow/ownership.ts; status, repair and the workflow ask it. Tests may reach the codec to test it.',
      severity: 'error',
      from: { pathNot: '^(lib/workflow/ownership\\.ts|test/)' },
      to: { path: '^lib/workflow/owner-record\\.ts$' },
    },
    {
      name: 'resolvable',
      comment: 'Every import resolves: an import the check cannot follow is one it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // swc parses TypeScript here: the project's TypeScript 7 (the native compiler) has no JavaScript API.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.serverless|\\.esbuild|dist|coverage)/' },
    moduleSystems: ['es6', 'cjs'],
    // Resolve npm packages' `exports` subpaths (e.g. @aws-lambda-powertools/logger/middleware) as Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
