'use strict';

/**
 * The metrics endpoint's text expositions pass Prometheus's own linter, `promtool check metrics`
 * (issue 18, minor 11: prom-client's nodejs_active_*_total gauges made it exit 3), the summaries
 * of the last interval and the classic buckets included (issue 22).
 *
 * promtool reads only the 0.0.4 text format (prometheus/prometheus#8932), so on the OpenMetrics
 * exposition it cannot match a counter's HELP, written on the family (`foo`) as OpenMetrics
 * requires, to its `foo_total` samples, and says "no help text" for each counter. Those lines are
 * the parser's limit, not a fault; the test allows exactly them and nothing else.
 */

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { assertTools } = require('../helpers/system-tools');

/**
 * Runs `promtool check metrics` on a text.
 * @param {string} text
 * @returns {Promise<{code: number, problems: string[]}>}
 */
function promtool (text) {
  assertTools(['promtool']);
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('promtool ran more than 20 s')); }, 20000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, problems: out.split('\n').filter((l) => l.trim() !== '') });
    });
    child.stdin.end(text);
  });
}

describe('metrics endpoint: promtool check metrics', function () {
  this.timeout(30000);
  let sim, gw;

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(validateConfig({
      gateway: { id: 'gw-lint', interval: '200ms', workers: 1, metrics: { listen: '127.0.0.1:0' } },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url } },
      jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 4 }, rate: '100/s', count: 40 }]
    }, { env: {} }));
    const ended = new Promise((resolve) => gw.once('end', resolve));
    await gw.start();
    await ended; // every family has samples: jobs, devices, the publisher, the process
  });

  after(async () => {
    if (gw) await gw.stop();
    if (sim) await sim.close();
  });

  it('passes the text exposition (0.0.4) clean: exit 0, no problem', async () => {
    const res = await fetch(gw.metrics.url, { headers: { accept: 'text/plain' } });
    assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^nodejs_active_handles\{/m, 'the per-type gauges stay');
    const { code, problems } = await promtool(text);
    assert.deepEqual(problems, []);
    assert.equal(code, 0);
  });

  it('passes the summaries of the last interval and the classic buckets, in both text formats, with nothing but promtool\'s own limit', async () => {
    for (const accept of ['text/plain', 'application/openmetrics-text; version=1.0.0']) {
      const text = await (await fetch(gw.metrics.url, { headers: { accept } })).text();
      for (const metric of ['response_time', 'service_time', 'dispatch_lag']) {
        assert.match(text, new RegExp(`^# TYPE nines_job_interval_${metric}_seconds summary$`, 'm'));
        assert.match(text, new RegExp(`^nines_job_interval_${metric}_seconds\\{[^}]*job_name="hr"[^}]*,quantile="0\\.999"\\} \\d`, 'm'));
        assert.match(text, new RegExp(`^# TYPE nines_job_interval_${metric}_max_seconds gauge$`, 'm'));
        assert.match(text, new RegExp(`^nines_job_${metric}_seconds_bucket\\{[^}]*job_name="hr"[^}]*,le="0\\.001"\\} \\d+$`, 'm'));
      }
      const counters = new Set([...text.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => m[1]));
      const { problems } = await promtool(text);
      assert.deepEqual(problems.filter((p) => !/^(\S+)_total no help text$/.test(p) || !counters.has(/^(\S+)_total/.exec(p)[1])), [], accept);
    }
  });

  it('passes the OpenMetrics exposition but for promtool\'s own limit (a counter\'s HELP on its family), and no gauge ends in _total', async () => {
    const res = await fetch(gw.metrics.url, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    assert.match(res.headers.get('content-type'), /^application\/openmetrics-text/);
    const text = await res.text();
    const counters = new Set([...text.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => m[1]));
    assert.ok(counters.size > 0);
    const { problems } = await promtool(text);
    const beyondLimit = problems.filter((p) => {
      const m = /^(\S+)_total no help text$/.exec(p);
      return !(m && counters.has(m[1]));
    });
    assert.deepEqual(beyondLimit, []);
    for (const m of text.matchAll(/^# TYPE (\S+) gauge$/gm)) assert.doesNotMatch(m[1], /_total$/, `gauge ${m[1]}`);
  });
});
