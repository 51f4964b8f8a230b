/**
 * `npm run bench`: drainbridge against `kubectl drain` on identical fresh simulated clusters, in the
 * same run. See bench/README.md for what is measured and how. `npm run bench -- --help` lists options.
 */

// The functions log every pass at INFO, as they do on Lambda; the benchmark's output is its table, and
// a failed run reports its own reason. POWERTOOLS_LOG_LEVEL=INFO shows the functions' logs again.
// Set before the modules load, because their loggers read the level when they are created.
process.env.POWERTOOLS_LOG_LEVEL ??= 'CRITICAL';
// Their CloudWatch metrics (EMF lines on stdout) mean nothing here; the benchmark counts for itself.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const { main } = await import('./lib/drain-main.ts');
process.exitCode = await main(process.argv.slice(2));
