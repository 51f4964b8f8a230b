/**
 * `npm run bench:nova`: drainbridge's Nova branch against `nova host-evacuate-live` on the real-Nova
 * lab (test/e2e/openstack/), in the same run. See bench/README.md.
 */

// Outside Lambda the functions' log lines go to the log sink, which is off unless asked
// (DRAINBRIDGE_LOG_LEVEL=info, DRAINBRIDGE_LOG_FILE=…; lib/log/sink.ts): the benchmark's output is its
// table, and a failed run reports its own reason. Their EMF metric lines go there too, at debug.

const { main } = await import('./lib/nova-main.ts');
process.exitCode = await main(process.argv.slice(2));
