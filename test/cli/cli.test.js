'use strict';

/**
 * The `nines` command as a user runs it: child processes, real simulators, files on disk.
 */

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const mqtt = require('mqtt');
const { startChildSim } = require('../helpers/child-sim');
const { parseHgrm } = require('../../gateway/latency');
const { nines, NINES_BIN } = require('../helpers/nines-cli');

describe('nines CLI', function () {
  this.timeout(60000);
  let tmp;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-cli-')); });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('lists its commands with --help and rejects an unknown one', async () => {
    const help = await nines(['--help']);
    assert.equal(help.code, 0);
    for (const c of ['run', 'probe', 'sweep', 'sim', 'plot', 'watch']) assert.match(help.stdout, new RegExp(`\\b${c}\\b`));
    const bad = await nines(['frobnicate']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown command "frobnicate"/);
  });

  describe('probe', () => {
    let sim;
    before(async () => { sim = await startChildSim('ascii'); });
    after(async () => { await sim.stop(); });

    it('prints one row per connection count and writes one .hgrm per run, named like the vendor\'s', async () => {
      const dir = path.join(tmp, 'out');
      const r = await nines(['probe', sim.url, '--command', '@01', '--connections', '1,2,4,8', '--count', '2000', '--hgrm', dir]);
      assert.equal(r.code, 0, r.stderr);
      const rows = r.stdout.split('\n').filter((l) => /^\s+[1248]\s+2000\s/.test(l));
      assert.equal(rows.length, 4, r.stdout);
      const files = fs.readdirSync(dir).sort();
      assert.deepEqual(files, ['ED-588-@AA-1x.hgrm', 'ED-588-@AA-2x.hgrm', 'ED-588-@AA-4x.hgrm', 'ED-588-@AA-8x.hgrm']);
      for (const f of files) {
        const text = fs.readFileSync(path.join(dir, f), 'utf8');
        // what HdrHistogram's plotter keeps: lines not starting with # with exactly 4 fields
        const dataRows = text.split('\n').filter((l) => l.trim() && !l.startsWith('#') && l.trim().split(/\s+/).length === 4 && !/Value/.test(l));
        assert.ok(dataRows.length >= 10, `${f}: ${dataRows.length} plottable rows`);
        assert.match(text, /^#\[Mean {4}=/m);
        assert.match(text, /^#\[Max {5}=.*Total count {4}= +2000\]$/m);
        assert.equal(parseHgrm(text).count, 2000);
      }
    });

    it('--json gives machine-readable runs with percentiles and the encoded histogram', async () => {
      const r = await nines(['probe', sim.url, '--generator', '@AA(Data)', '--connections', '2', '--count', '500', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.runs.length, 1);
      const run = out.runs[0];
      assert.equal(run.connections, 2);
      assert.equal(run.ok, 500);
      assert.equal(run.label, '@AA(Data)');
      assert.match(run.hist, /^HISTF/);
      for (const k of ['p50', 'p99', 'p99_9', 'p99_99', 'max']) assert.equal(typeof run.summary[k], 'number');
      assert.ok(run.summary.p50 <= run.summary.p99 && run.summary.p99 <= run.summary.max);
    });

    it('--reconnect-each opens a connection per request and says so in the run', async () => {
      const r = await nines(['probe', sim.url, '--command', '@01', '--count', '200', '--reconnect-each', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const run = JSON.parse(r.stdout).runs[0];
      assert.equal(run.reconnectEach, true);
      assert.equal(run.ok, 200);
      assert.match(run.name, /-1x-reconnect$/);
    });

    it('names a Modbus run\'s .hgrm file with its operation, fc3-0+10 for --read 3:0:10', async () => {
      const modbus = await startChildSim('modbus');
      try {
        const dir = path.join(tmp, 'out');
        const r = await nines(['probe', modbus.url, '--read', '3:0:10', '--count', '200', '--hgrm', dir]);
        assert.equal(r.code, 0, r.stderr);
        const files = fs.readdirSync(dir);
        assert.equal(files.length, 1, files.join(', '));
        assert.match(files[0], /-fc3-0\+10-1x\.hgrm$/);
      } finally {
        await modbus.stop();
      }
    });

    it('rejects a bad target, command or option with its code and exit 1', async () => {
      const t = await nines(['probe', 'ftp://x', '--command', '@01']);
      assert.equal(t.code, 1);
      assert.match(t.stderr, /NINES_ERR_INVALID_TARGET/);
      const c = await nines(['probe', sim.url, '--command', '@1']);
      assert.equal(c.code, 1);
      assert.match(c.stderr, /NINES_ERR_INVALID_COMMAND/);
      const o = await nines(['probe', sim.url, '--command', '@01', '--connections', 'two']);
      assert.equal(o.code, 1);
      assert.match(o.stderr, /--connections/);
    });
  });

  describe('run', () => {
    it('exits non-zero with a message naming the field of a bad config', async () => {
      const file = path.join(tmp, 'bad.yaml');
      fs.writeFileSync(file, 'gateway: { id: edge-1 }\ndevices:\n  d: { target: "ascii://127.0.0.1:9500" }\njobs:\n  - { name: j, device: d, command: "@01", rate: fast }\n');
      const r = await nines(['run', file]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /NINES_ERR_CONFIG/);
      assert.match(r.stderr, /jobs\[0\]\.rate/);
    });

    it('runs a config with the embedded broker, publishes status and summaries, and goes offline on exit', async () => {
      const sim = await startChildSim('ascii');
      const port = await new Promise((resolve) => { const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
      const file = path.join(tmp, 'gw.yaml');
      fs.writeFileSync(file, [
        'gateway: { id: cli-test, interval: 300ms }',
        `mqtt: { embedded: { port: ${port} } }`,
        'devices:',
        `  ed588: { target: "${sim.url}" }`,
        'jobs:',
        '  - { name: inputs, device: ed588, command: "@01", rate: 100/s }'
      ].join('\n'));
      const seen = { latency: [], status: [] };
      const run = nines(['run', file, '--duration', '4s']);
      // subscribe once the embedded broker is up
      let client;
      for (let i = 0; i < 100 && !client; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 500 });
        const ok = await new Promise((resolve) => { c.once('connect', () => resolve(true)); c.once('error', () => resolve(false)); c.once('close', () => resolve(false)); });
        if (ok) client = c; else c.end(true);
      }
      assert.ok(client, 'embedded broker reachable');
      client.on('message', (topic, payload) => {
        const body = JSON.parse(payload.toString());
        if (topic.endsWith('/status')) seen.status.push(body.state);
        if (topic.endsWith('/latency')) seen.latency.push(body);
      });
      await client.subscribeAsync('nines/#', { qos: 1 });
      const r = await run;
      await client.endAsync();
      await sim.stop();
      assert.equal(r.code, 0, r.stderr);
      assert.ok(seen.status.includes('online'), `status ${seen.status}`);
      assert.ok(seen.latency.length >= 3, `${seen.latency.length} summaries`);
      assert.ok(seen.latency.every((m, i) => i === 0 || m.seq === seen.latency[i - 1].seq + 1));
      assert.match(r.stdout, /cli-test\/inputs seq=0 count=\d+ ok=\d+/);
    });
  });

  describe('run with no config (the demo)', () => {
    it('with --mqtt, publishes to that broker and never says it starts an embedded one', async () => {
      // our own broker on a free port: the demo never needs 1883
      const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
      const broker = await startEmbeddedBroker({ port: 0 });
      try {
        const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
        const jobs = new Set();
        client.on('message', (topic) => { const m = /^nines\/demo\/([^/]+)\/latency$/.exec(topic); if (m) jobs.add(m[1]); });
        await client.subscribeAsync('nines/demo/#', { qos: 1 });
        const r = await nines(['run', '--mqtt', broker.url, '--duration', '3s', '--interval', '500ms', '--quiet']);
        await client.endAsync();
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /embedded/i);
        assert.match(r.stderr, new RegExp(`nines demo: no config given, starting simulators and publishing to ${broker.url.replace(/[.]/g, '\\.')}\n`));
        assert.match(r.stderr, new RegExp(`^MQTT broker ${broker.url.replace(/[.]/g, '\\.')},`, 'm'));
        assert.ok(jobs.has('ed588-inputs') && jobs.has('plc1-hr-4conn'), `summaries from ${[...jobs]}`);
      } finally {
        await broker.close();
      }
    });
  });

  describe('watch', () => {
    it('refuses a broker URL that is not MQTT (http://, ftp://) with its code and exit 1', async () => {
      for (const url of ['http://127.0.0.1:1883', 'ftp://broker']) {
        const r = await nines(['watch', url, '--duration', '1s']);
        assert.equal(r.code, 1, url);
        assert.match(r.stderr, /NINES_ERR_INVALID_ARG: broker URL: .* unsupported scheme/);
      }
    });
  });

  describe('the small things a user meets first (issue 21)', () => {
    it('nines watch ends quietly, exit 0, when the reader closes the pipe (nines watch | head -1)', async () => {
      const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
      const broker = await startEmbeddedBroker({ port: 0 });
      try {
        const child = spawn(process.execPath, [NINES_BIN, 'watch', broker.url, '--duration', '20s'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d) => { stderr += d; });
        // head -1: read the first line, then close the pipe
        await new Promise((resolve) => child.stdout.once('data', resolve));
        child.stdout.destroy();
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // something new to print: a summary it rejects makes it write its counters line
        const pub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
        const t0 = Date.now();
        let code;
        for (let i = 0; i < 40 && code === undefined; i++) {
          await pub.publishAsync('nines/g/j/latency', 'not a summary');
          code = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 250))]);
        }
        await pub.endAsync();
        assert.equal(code, 0, stderr);
        // ended by the closed pipe, long before its 20 s --duration
        assert.ok(Date.now() - t0 < 10000, `${Date.now() - t0} ms`);
        assert.doesNotMatch(stderr, /EPIPE|at /);
      } finally {
        await broker.close();
      }
    });

    it('nines probe and sweep without an operation say which flags give one, in the CLI\'s words', async () => {
      for (const cmd of ['probe', 'sweep']) {
        const r = await nines([cmd, 'modbus+tcp://127.0.0.1:1']);
        assert.equal(r.code, 1);
        assert.match(r.stderr, new RegExp(`NINES_ERR_INVALID_ARG: nines ${cmd} needs what to send: one of --command, --generator, --read, --write`));
        assert.doesNotMatch(r.stderr, /tags/);
      }
    });

    it('nines sim suggests the simulator a typo meant', async () => {
      const r = await nines(['sim', 'modbuss']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /got "modbuss": did you mean "modbus"\?/);
    });

    it('nines plot names the file it cannot read as a distribution', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-plot-'));
      try {
        const bad = path.join(dir, 'not-a-histogram.hgrm');
        fs.writeFileSync(bad, 'garbage\n');
        const r = await nines(['plot', bad, '-o', path.join(dir, 'out.svg')]);
        assert.equal(r.code, 1);
        assert.match(r.stderr, new RegExp(`${bad.replace(/[.]/g, '\\.')} is not a percentile distribution`));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('sim', () => {
    it('serves ED-588 and Modbus TCP on the ports it prints, and stops after --duration', async () => {
      const r = await nines(['sim', 'modbus', '--port', '0', '--duration', '300ms']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Modbus TCP\s+modbus\+tcp:\/\/127\.0\.0\.1:\d+\?unitId=1/);
      const bad = await nines(['sim', 'ascii', '--faults', 'latency=fast']);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /NINES_ERR_INVALID_ARG/);
    });

    it('serves RTU over TCP for a list of unit ids, with a quirk mode, on the port it prints', async () => {
      const r = await nines(['sim', 'rtutcp', '--port', '0', '--unit-id', '3,5-6', '--needs-inter-frame-delay', '20ms', '--duration', '300ms']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Modbus RTU\/TCP\s+modbus\+rtutcp:\/\/127\.0\.0\.1:\d+\?unitId=3 {2}needs: inter-frame delay 20ms/);
      const quirkOnAscii = await nines(['sim', 'ascii', '--needs-delay-after-connect', '1s']);
      assert.equal(quirkOnAscii.code, 1);
      assert.match(quirkOnAscii.stderr, /NINES_ERR_INVALID_ARG: --needs-delay-after-connect and --needs-inter-frame-delay are for the modbus, rtu and rtutcp simulators/);
      const badIds = await nines(['sim', 'rtutcp', '--unit-id', '3,300']);
      assert.match(badIds.stderr, /--unit-id must be unit ids 0-255/);
    });
  });
});
