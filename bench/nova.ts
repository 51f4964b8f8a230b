/**
 * `npm run bench:nova`: drainbridge's Nova branch against `nova host-evacuate-live` on the real-Nova
 * lab (test/e2e/openstack/), in the same run. See bench/README.md.
 */

// The Nova pass logs at INFO, as it does on Lambda; the benchmark's output is its table, and a failed
// run reports its own reason. POWERTOOLS_LOG_LEVEL=INFO shows the logs again.
process.env.POWERTOOLS_LOG_LEVEL ??= 'CRITICAL';
// Their CloudWatch metrics (EMF lines on stdout) mean nothing here; the benchmark counts for itself.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const { main } = await import('./lib/nova-main.ts');
process.exitCode = await main(process.argv.slice(2));
