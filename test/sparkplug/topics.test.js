'use strict';

const assert = require('node:assert/strict');
const { idProblem, nodeTopics, parseTopic } = require('../../gateway/runtime/sparkplug/topics');
const { buildModel, metricConflicts } = require('../../gateway/runtime/sparkplug/model');
const { decodeCommand } = require('../../gateway/runtime/sparkplug/codec');

describe('Sparkplug topics, ids and the node model', () => {
  it('takes any one topic level as an id, and refuses / + #, control characters, empty and overlong ones', () => {
    for (const ok of ['plant1', 'Edge Node 1', 'zone.a-b_c', 'Gebäude']) assert.equal(idProblem(ok), null, ok);
    for (const bad of ['', 'a/b', 'a+b', 'a#', 'tab\there', 'x'.repeat(129), 5, null]) assert.match(String(idProblem(bad)), /must be 1 to 128 characters/, String(bad));
  });

  it('builds and splits the topics of a node and its devices', () => {
    const t = nodeTopics('g', 'n');
    assert.equal(t.nbirth, 'spBv1.0/g/NBIRTH/n');
    assert.equal(t.dcmdFilter, 'spBv1.0/g/DCMD/n/+');
    assert.equal(t.device('DDATA', 'plc'), 'spBv1.0/g/DDATA/n/plc');
    assert.deepEqual(parseTopic('spBv1.0/g/DCMD/n/plc'), { group: 'g', type: 'DCMD', node: 'n', device: 'plc' });
    assert.deepEqual(parseTopic('spBv1.0/g/NCMD/n'), { group: 'g', type: 'NCMD', node: 'n', device: null });
    for (const bad of ['spBv1.0/g/NCMD/n/x', 'spBv1.0/g/DCMD/n', 'spAv1.0/g/NCMD/n', 'spBv1.0/g/XCMD/n', 'spBv1.0/STATE/host']) assert.equal(parseTopic(bad), null, bad);
  });

  it('makes one Sparkplug device per nines device with the tags of all its tag jobs, once each', () => {
    const a = { name: 'a', table: 'holding', address: 0, type: 'int16', scale: 1, offset: 0, unit: 'bar' };
    const b = { name: 'b', table: 'coil', address: 0, type: 'bool', scale: 1, offset: 0, unit: null };
    const model = buildModel({
      jobs: [
        { name: 'fast', device: 'plc', kind: 'tags', tags: [a], values: { minIntervalMs: 100 } },
        { name: 'slow', device: 'plc', kind: 'tags', tags: [a, b], values: { minIntervalMs: 1000 } },
        { name: 'raw', device: 'meter', kind: 'read', values: {} }
      ]
    });
    assert.deepEqual([...model.devices.keys()], ['plc']);
    const plc = model.devices.get('plc');
    assert.deepEqual(plc.metrics, [{ name: 'a', datatype: 'Int16', unit: 'bar' }, { name: 'b', datatype: 'Boolean', unit: null }]);
    assert.equal(plc.minIntervalMs, 100);
    assert.deepEqual(model.latencyJobs, ['fast', 'slow', 'raw']);
    assert.deepEqual(metricConflicts([{ name: 'x', device: 'plc', tags: [a] }, { name: 'y', device: 'plc', tags: [{ ...a, address: 5 }] }, { name: 'z', device: 'other', tags: [{ ...a, address: 9 }] }]).map((c) => [c.job, c.name]), [[1, 'a']]);
  });

  it('refuses a command that is not bytes, too large, without metrics or with a metric that has neither name nor alias', () => {
    const { encodePayload } = require('../../gateway/runtime/sparkplug/codec');
    const t = 'spBv1.0/g/NCMD/n';
    for (const [bytes, why] of [['text', /not bytes/], [Buffer.alloc(65537), /more than 65536/], [encodePayload({ timestamp: 1 }), /no metric/], [encodePayload({ metrics: [{ type: 'Boolean', value: true }] }), /neither a name nor an alias/]]) {
      assert.throws(() => decodeCommand(bytes, t), (e) => e.code === 'NINES_ERR_SPARKPLUG' && why.test(e.message) && /nothing was changed/.test(e.message));
    }
  });
});
