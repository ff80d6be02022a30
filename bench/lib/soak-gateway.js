'use strict';

/**
 * The gateway under soak (bench/soak.js), in its own process so that nothing of the soak's own
 * bookkeeping is in its memory. Run with --expose-gc: each sample follows a full collection, so
 * heapUsed is what is live, not what the collector has not got to yet.
 *
 * IPC in: {type: 'config', config} (a raw gateway config), {type: 'sample'}, {type: 'stop'}.
 * IPC out: {type: 'broker', url}, {type: 'sample', rss, heapUsed, external, arrayBuffers, stats}, {type: 'stopped'}.
 */

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
// as `nines run` does, before the modules load: an hour's memory is measured with the V8 settings
// a gateway runs with (its workers' young generation and first old-generation limit)
require(path.join(ROOT, 'gateway/base/v8-flags')).setProcessFlags();

process.on('message', async (m) => {
  if (m.type === 'config') {
    const { validateConfig } = require(path.join(ROOT, 'gateway/runtime/config'));
    const { Gateway } = require(path.join(ROOT, 'gateway/runtime/gateway'));
    const gw = new Gateway(validateConfig(m.config));
    gw.on('job-error', () => {}); // counted in the summaries; the soak looks at memory
    gw.on('broker', (b) => process.send({ type: 'broker', url: b.url }));
    process.gateway = gw;
    await gw.start();
  } else if (m.type === 'sample') {
    if (global.gc) global.gc();
    const u = process.memoryUsage();
    const s = process.gateway && process.gateway.publisher ? process.gateway.publisher.stats : {};
    process.send({ type: 'sample', rss: u.rss, heapUsed: u.heapUsed, external: u.external, arrayBuffers: u.arrayBuffers, stats: { published: s.published, dropped: s.dropped, buffered: s.buffered, spool: s.spool } });
  } else if (m.type === 'stop') {
    if (process.gateway) await process.gateway.stop();
    process.send({ type: 'stopped' });
    process.disconnect();
  }
});
