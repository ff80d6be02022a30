'use strict';

/**
 * The FlowFuse Dashboard 2 example (examples/fleet-percentiles-and-device-health-in-flowfuse-dashboard.json),
 * checked as data without installing the dashboard: its widgets and config nodes refer to each
 * other correctly, the chart gets one series per percentile (p50, p99, p99.9) in a fixed order
 * and so with fixed colours, and the health table's function turns retained gateway statuses into
 * one row per gateway and device. The series names and rows are computed by running the flow's
 * own change rules and function body.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { chartSeries } = require('../../nodes/lib/latency-window');

const FILE = path.join(__dirname, '..', '..', 'examples', 'fleet-percentiles-and-device-health-in-flowfuse-dashboard.json');
const nodes = JSON.parse(fs.readFileSync(FILE, 'utf8'));
const byId = new Map(nodes.map((n) => [n.id, n]));
const one = (type) => { const list = nodes.filter((n) => n.type === type); assert.equal(list.length, 1, type); return list[0]; };

/** Node types of FlowFuse Dashboard 2 (@flowfuse/node-red-dashboard 1.x) that the flow uses */
const DASHBOARD = new Set(['ui-base', 'ui-theme', 'ui-page', 'ui-group', 'ui-chart', 'ui-table']);
const CORE = new Set(['tab', 'comment', 'mqtt-broker', 'mqtt in', 'change', 'switch', 'function', 'catch', 'debug']);

describe('example: fleet percentiles and device health in FlowFuse Dashboard 2', () => {
  it('uses only core, nines and Dashboard 2 nodes, and every dashboard reference resolves', () => {
    for (const n of nodes) assert.ok(CORE.has(n.type) || DASHBOARD.has(n.type) || n.type.startsWith('nines-'), n.type);
    const ref = (n, field, type) => {
      const target = byId.get(n[field]);
      assert.ok(target && target.type === type, `${n.type} ${n.id}.${field} → ${type}`);
    };
    for (const n of nodes) {
      if (n.type === 'ui-page') { ref(n, 'ui', 'ui-base'); ref(n, 'theme', 'ui-theme'); }
      if (n.type === 'ui-group') ref(n, 'page', 'ui-page');
      if (n.type === 'ui-chart' || n.type === 'ui-table') ref(n, 'group', 'ui-group');
      if (n.type === 'mqtt in') ref(n, 'broker', 'mqtt-broker');
    }
  });

  it('charts p50, p99 and p99.9 of the whole fleet, from merged histograms, one series each, always in that order', () => {
    const merge = one('nines-latency-merge');
    assert.equal(merge.keyBy, 'all');
    assert.equal(merge.percentiles, 'p50,p99,p99_9');
    const mqttIn = nodes.find((n) => n.type === 'mqtt in' && n.wires[0].includes(merge.id));
    assert.equal(mqttIn.topic, 'nines/+/+/latency');
    assert.equal(mqttIn.datatype, 'json');
    // output 2 (chart points) goes through the change node and a switch to two charts: p50 on its
    // own axis, the tail on another (issue 21: on one linear axis p50 was a flat line on zero)
    const change = byId.get(merge.wires[1][0]);
    assert.equal(change.type, 'change');
    const sw = byId.get(change.wires[0][0]);
    assert.equal(sw.type, 'switch');
    assert.equal(sw.property, 'topic');
    assert.deepEqual(sw.rules, [{ t: 'eq', v: 'p50', vt: 'str' }, { t: 'else' }]);
    const typical = byId.get(sw.wires[0][0]);
    const chart = byId.get(sw.wires[1][0]);
    for (const c of [typical, chart]) {
      assert.equal(c.type, 'ui-chart');
      assert.deepEqual([c.chartType, c.category, c.categoryType, c.yAxisProperty, c.xAxisPropertyType], ['line', 'topic', 'msg', 'payload', 'timestamp']);
    }
    assert.notEqual(typical.id, chart.id);

    // the merge node's own chart messages, through the flow's own change rules
    const summary = { key: 'all', p50: 1.2, p99: 8.5, p99_9: 31, window: { end: 1700000000000 } };
    const topics = chartSeries(summary, merge.percentiles.split(',')).map((msg) => {
      let topic = msg.topic;
      for (const r of change.rules) {
        assert.equal(r.t, 'change');
        topic = r.fromt === 're' ? topic.replace(new RegExp(r.from, 'g'), r.to) : topic.split(r.from).join(r.to);
      }
      return topic;
    });
    assert.deepEqual(topics, ['p50', 'p99', 'p99.9']);
    // ui-chart colours series in the order they first appear: fixed order, fixed colours
    assert.equal(typical.colors[0], '#1f77b4');
    assert.deepEqual(chart.colors.slice(0, 2), ['#ff7f0e', '#d62728']);
  });

  it('shows one health row per gateway and device from the retained statuses', () => {
    const mqttIn = nodes.find((n) => n.type === 'mqtt in' && n.topic === 'nines/+/status');
    const fn = byId.get(mqttIn.wires[0][0]);
    assert.equal(fn.type, 'function');
    const table = byId.get(fn.wires[0][0]);
    assert.equal(table.type, 'ui-table');
    const store = {};
    const context = { get: (k) => store[k], set: (k, v) => { store[k] = v; } };
    // plain data back from the sandbox's realm, so that deepEqual compares values, not prototypes
    const run = (payload) => JSON.parse(JSON.stringify(vm.runInNewContext(`(function (msg, context) {\n${fn.func}\n})`, {})({ payload }, context)));
    run({ state: 'online', gateway: 'edge-2', devices: { plc: { state: 'down', since: '2026-01-01T00:00:00.000Z', lastError: { code: 'NINES_ERR_CONNECT_FAILED' } } } });
    const out = run({ state: 'online', gateway: 'edge-1', devices: { ed588: { state: 'up', since: '2026-01-01T00:00:01.000Z', lastError: null } } });
    assert.deepEqual(out.payload.map((r) => [r.gateway, r.device, r.state, r['last error']]), [
      ['edge-1', 'ed588', 'up', ''],
      ['edge-2', 'plc', 'down', 'NINES_ERR_CONNECT_FAILED']
    ]);
    // a gateway that went offline (its last will) marks its devices so
    const gone = run({ state: 'offline', gateway: 'edge-2', devices: { plc: { state: 'down', since: '2026-01-01T00:00:00.000Z', lastError: null } } });
    assert.equal(gone.payload.find((r) => r.gateway === 'edge-2').state, 'gateway offline');
    assert.equal(run({ not: 'a status' }), null);
    assert.deepEqual(table.columns.map((c) => c.key), ['gateway', 'device', 'state', 'since', 'last error']);
    // since: local time and how long ago, not raw UTC text (issue 21)
    const t = Date.now() - 125000;
    const since = run({ state: 'online', gateway: 'edge-3', devices: { io: { state: 'up', since: new Date(t).toISOString(), lastError: null } } })
      .payload.find((r) => r.gateway === 'edge-3').since;
    const d = new Date(t);
    const p = (n) => String(n).padStart(2, '0');
    assert.equal(since, `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} (2 min ago)`);
  });
});
