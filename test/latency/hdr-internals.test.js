'use strict';

/**
 * gateway/latency/paged-histogram.js subclasses hdr-histogram-js's JsHistogram and relies on parts
 * of it that are not its public API: the `_totalCount` field, the layout fields, and which storage
 * hooks the library calls. package.json pins the version these were checked against; a new version
 * that changes any of them fails here, naming what changed, before it corrupts a percentile.
 */

const assert = require('node:assert/strict');
const hdr = require('hdr-histogram-js');
const { PagedHistogram } = require('../../gateway/latency/paged-histogram');
const C = require('../../gateway/base/constants');

const VERSION = require('hdr-histogram-js/package.json').version;
const USER = 'gateway/latency/paged-histogram.js';

/** Asserts, naming the internal and its user, so a failure says exactly what moved. */
function internal (name, ok, detail = '') {
  assert.ok(ok, `hdr-histogram-js ${VERSION}: internal "${name}" changed${detail ? ` (${detail})` : ''}; ${USER} relies on it. ` +
    'Check the new version against it before changing the pin in package.json.');
}

/** A bare subclass that logs the storage hooks the library calls. */
class Spy extends hdr.JsHistogram {
  constructor () {
    super(C.HIST_LOWEST_NS, C.HIST_HIGHEST_NS, C.HIST_DIGITS);
    // as PagedHistogram and the library's own TypedArrayHistogram do: JsHistogram leaves it unset
    this._totalCount = 0;
    this.calls = [];
    this.counts = new Map();
  }

  getCountAtIndex (i) { this.calls.push('getCountAtIndex'); return this.counts.get(i) || 0; }
  incrementCountAtIndex (i) { this.calls.push('incrementCountAtIndex'); this.counts.set(i, (this.counts.get(i) || 0) + 1); }
  addToCountAtIndex (i, v) { this.calls.push('addToCountAtIndex'); this.counts.set(i, (this.counts.get(i) || 0) + v); }
  setCountAtIndex (i, v) { this.calls.push('setCountAtIndex'); this.counts.set(i, v); }
  clearCounts () { this.calls.push('clearCounts'); this.counts.clear(); }
  _getEstimatedFootprintInBytes () { this.calls.push('_getEstimatedFootprintInBytes'); return 0; }
  resize () { this.calls.push('resize'); }
}

describe('latency: the hdr-histogram-js internals nines relies on', () => {
  it('keeps the total count in the _totalCount field behind totalCount and setTotalCount', () => {
    const h = new Spy();
    h._totalCount = 7;
    internal('totalCount getter reads _totalCount', h.totalCount === 7);
    h.setTotalCount(9);
    internal('setTotalCount writes _totalCount', h._totalCount === 9);
    h.recordValue(1000);
    internal('recordValue increments _totalCount', h._totalCount === 10);
    const lib = new hdr.Int32Histogram(1, 2, 3);
    internal('_totalCount', Object.prototype.hasOwnProperty.call(lib, '_totalCount'), 'the library\'s own subclasses keep the count there too');
  });

  it('lays out 1 ns … 1 h at 3 digits as nines encodes and merges it', () => {
    const h = new PagedHistogram();
    const layout = {
      subBucketHalfCountMagnitude: 10,
      subBucketHalfCount: 1024,
      subBucketCount: 2048,
      unitMagnitude: 0,
      bucketCount: 32,
      countsArrayLength: 33792
    };
    for (const [field, want] of Object.entries(layout)) internal(field, h[field] === want, `${h[field]}, expected ${want}`);
    internal('autoResize', h.autoResize === false, 'a plain field the subclass turns off');
    for (const field of ['maxValue', 'minNonZeroValue', 'startTimeStampMsec', 'endTimeStampMsec', 'lowestDiscernibleValue', 'numberOfSignificantValueDigits']) {
      internal(field, typeof h[field] === 'number', typeof h[field]);
    }
    for (const fn of ['valueFromIndex', 'lowestEquivalentValue', 'highestEquivalentValue', 'medianEquivalentValue', 'countsArrayIndex']) {
      internal(fn, typeof h[fn] === 'function');
    }
  });

  it('stores counts only through the hooks the subclass overrides', () => {
    const h = new Spy();
    h.recordValue(5000);
    internal('recordValue → incrementCountAtIndex', h.calls.includes('incrementCountAtIndex') && h.counts.get(h.countsArrayIndex(5000)) === 1, h.calls.join(', '));
    h.calls.length = 0;
    h.recordValueWithCount(7000, 3);
    internal('recordValueWithCount → addToCountAtIndex', h.calls.includes('addToCountAtIndex') && h.counts.get(h.countsArrayIndex(7000)) === 3, h.calls.join(', '));
    h.calls.length = 0;
    h.getValueAtPercentile(50);
    h.reset();
    internal('reset → clearCounts', h.calls.includes('clearCounts'), h.calls.join(', '));
    assert.equal(h.estimatedFootprintInBytes, 0);
    internal('estimatedFootprintInBytes → _getEstimatedFootprintInBytes', h.calls.includes('_getEstimatedFootprintInBytes'), h.calls.join(', '));
  });

  it('rounds percentile ranks with the ulp that PagedHistogram copies', () => {
    const ulp = require('hdr-histogram-js/dist/ulp').default;
    for (const x of [1, 3, 0.1, 12345.678, 2 ** 40]) {
      internal('dist/ulp', ulp(x) === Math.pow(2, Math.floor(Math.log2(x)) - 52), `ulp(${x})`);
    }
  });
});
