'use strict';

/**
 * The example flows of Import › Examples (examples/*.json): each imports next to the others without
 * Node-RED's "nodes already exist" dialog, so no id is shared between two files, and examples/
 * holds flows only (the gateway's config and systemd unit live in gateway/examples/).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const DIR = path.join(ROOT, 'examples');
const CONFIG_TYPES = new Set(['nines-ascii-device', 'nines-modbus-device', 'mqtt-broker']);
/** Node fields that name another node */
const REFS = ['device', 'asciiDevice', 'modbusDevice', 'broker'];

function examples () {
  return fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()
    .map((f) => ({ file: f, nodes: JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) }));
}

describe('example flows', () => {
  it('holds flows only: Import › Examples lists every file and folder of examples/', () => {
    const entries = fs.readdirSync(DIR, { withFileTypes: true });
    assert.deepEqual(entries.filter((e) => !(e.isFile() && e.name.endsWith('.json'))).map((e) => e.name), []);
    assert.ok(entries.length >= 6);
    // the gateway's examples moved beside it
    assert.ok(fs.existsSync(path.join(ROOT, 'gateway', 'examples', 'gateway.yaml')));
    assert.ok(fs.existsSync(path.join(ROOT, 'gateway', 'examples', 'systemd', 'nines-gateway.service')));
  });

  it('shares no node id, config nodes included, between two example files', () => {
    const owner = new Map();
    for (const { file, nodes } of examples()) {
      assert.ok(Array.isArray(nodes) && nodes.length > 0, file);
      const own = new Set();
      for (const n of nodes) {
        assert.match(n.id, /^[0-9a-f]{16}$/, `${file}: id ${n.id}`);
        assert.ok(!own.has(n.id), `${file}: ${n.id} twice`);
        own.add(n.id);
        assert.ok(!owner.has(n.id), `${n.id} (${n.type}) is in ${owner.get(n.id)} and ${file}: importing both asks "nodes already exist"`);
        owner.set(n.id, file);
      }
    }
  });

  it('imports onto a tab of its own, labelled for what it shows, not "Flow 3" (issue 21)', () => {
    const labels = new Set();
    for (const { file, nodes } of examples()) {
      const tabs = nodes.filter((n) => n.type === 'tab');
      assert.equal(tabs.length, 1, `${file}: one tab`);
      const tab = tabs[0];
      assert.match(tab.label, /^nines: \S/, `${file}: tab label ${tab.label}`);
      assert.ok(!labels.has(tab.label), `${file}: label ${tab.label} used twice`);
      labels.add(tab.label);
      assert.ok(tab.info.length > 0, `${file}: the tab says what it shows`);
      for (const n of nodes) {
        // flow nodes (placed: x/y) on the tab; config nodes global, shared by the tab's nodes
        if (n.x !== undefined) assert.equal(n.z, tab.id, `${file}: ${n.id} (${n.type}) is not on the example's tab`);
        else if (n.type !== 'tab') assert.equal(n.z, undefined, `${file}: config node ${n.id} (${n.type}) is on a tab`);
      }
    }
  });

  it('wires and refers only to nodes of the same file', () => {
    for (const { file, nodes } of examples()) {
      const ids = new Set(nodes.map((n) => n.id));
      for (const n of nodes) {
        for (const id of (n.wires || []).flat()) assert.ok(ids.has(id), `${file}: ${n.id} wired to ${id}`);
        // (an mqtt-broker's own `broker` is its host name)
        for (const f of REFS) if (n[f] && !CONFIG_TYPES.has(n.type)) assert.ok(ids.has(n[f]), `${file}: ${n.id}.${f} = ${n[f]}`);
      }
    }
  });

  it('gives every example a title comment and config nodes named for their example, distinct across files', () => {
    const names = new Map();
    for (const { file, nodes } of examples()) {
      assert.equal(nodes[1].type, 'comment', `${file} starts with its tab, then its title`);
      assert.match(nodes[1].name, /\(run `npx nines (sim all|run)` first\)$/, file);
      for (const n of nodes.filter((x) => CONFIG_TYPES.has(x.type))) {
        assert.match(n.name, /\(example: .+\)$/, `${file}: ${n.type} "${n.name}"`);
        assert.ok(!names.has(n.name), `"${n.name}" in ${names.get(n.name)} and ${file}`);
        names.set(n.name, file);
      }
    }
  });

  it('has the probe write its .hgrm files into an explicit directory, named per run by the probe', () => {
    const { nodes } = examples().find((e) => e.file === 'latency-probe-writing-hgrm-files.json');
    const probe = nodes.find((n) => n.type === 'nines-latency-probe');
    assert.equal(probe.directory, 'hgrm');
    const file = nodes.find((n) => n.id === probe.wires[1][0]);
    assert.equal(file.type, 'file');
    assert.deepEqual([file.filename, file.filenameType, file.createDir], ['filename', 'msg', true]);
  });
});
