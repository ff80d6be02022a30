'use strict';

/**
 * The gateway's interval logs (`gateway.hlog`) when the file system refuses them: reported once per
 * job as NINES_ERR_IO, with the file and the system's cause, and polling is not disturbed.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');

describe('gateway interval logs that cannot be written', () => {
  let tmp;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-hlog-io-')); });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('reports a folder it cannot create as NINES_ERR_IO naming the file and the cause, once', () => {
    const blocker = path.join(tmp, 'not-a-dir');
    fs.writeFileSync(blocker, 'a file where the log folder should be');
    const config = validateConfig({
      gateway: { id: 'gw', interval: '1s', hlog: path.join(blocker, 'logs') },
      devices: { d: { target: 'ascii://127.0.0.1:9500' } },
      jobs: [{ name: 'inputs', device: 'd', command: '@01', rate: '10/s' }]
    });
    const gw = new Gateway(config);
    gw.startedAt = new Date().toISOString();
    const errors = [];
    gw.on('job-error', (job, err) => errors.push([job, err]));
    gw.writeHlog('inputs', [], { target: 'ascii://127.0.0.1:9500' });
    gw.writeHlog('inputs', [], { target: 'ascii://127.0.0.1:9500' });
    assert.equal(errors.length, 1, 'reported once');
    const [job, err] = errors[0];
    assert.equal(job, 'inputs');
    assert.equal(err.code, 'NINES_ERR_IO');
    assert.equal(err.details.cause, 'ENOTDIR');
    assert.match(err.details.file, /not-a-dir\/logs\/inputs-.*\.hlog$/);
    assert.match(err.message, /^cannot write the interval log /);
  });
});
