'use strict';

/**
 * The Prometheus protobuf exposition (io.prometheus.client.MetricFamily, length-delimited), the
 * only format that carries native histograms to Prometheus 2.x. Written by hand: prom-client 15
 * has no protobuf exposition and no native histograms (prometheus/client_js issue 576, open), and
 * the handful of message types below do not justify a protobuf runtime and a .proto build step.
 *
 * Field numbers are those of client_model's metrics.proto (Prometheus's prompb copy):
 *   MetricFamily { name 1, help 2, type 3, metric 4 }
 *   Metric { label 1, gauge 2, counter 3, summary 4, histogram 7 }   LabelPair { name 1, value 2 }
 *   Gauge, Counter { value 1 }
 *   Summary { sample_count 1, sample_sum 2, quantile 3 }   Quantile { quantile 1, value 2 }
 *   Histogram { sample_count 1, sample_sum 2, bucket 3, schema 5, zero_threshold 6, zero_count 7,
 *               positive_span 12, positive_delta 13 }
 *   Bucket { cumulative_count 1, upper_bound 2 }   BucketSpan { offset 1, length 2 }
 *
 * A latency histogram carries its classic buckets and its native ones in the same message, as
 * Prometheus's client libraries do: Prometheus with native histograms on stores the native ones
 * (and the classic ones too with always_scrape_classic_histograms, scrape_classic_histograms before
 * 3.0); a scraper that asks for protobuf without them reads the classic buckets.
 */

const TYPE = Object.freeze({ counter: 0, gauge: 1, summary: 2, untyped: 3, histogram: 4 });
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;

/** A growable byte buffer with protobuf's primitive encodings. */
class Writer {
  constructor (size = 256) {
    this.buf = Buffer.allocUnsafe(size);
    this.pos = 0;
  }

  ensure (n) {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** @param {number} n an integer in [0, 2^53) */
  varint (n) {
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }

  tag (field, wire) {
    this.varint(field * 8 + wire);
  }

  /** zigzag (sint32 / sint64) @param {number} n a safe integer */
  sint (field, n) {
    this.tag(field, VARINT);
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  uint (field, n) {
    this.tag(field, VARINT);
    this.varint(n);
  }

  double (field, v) {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  string (field, s) {
    const len = Buffer.byteLength(s);
    this.tag(field, LEN);
    this.varint(len);
    this.ensure(len);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += len;
  }

  /**
   * A nested message: its length is known only after it is written, so it is written into a
   * scratch writer first.
   * @param {number} field
   * @param {(w: Writer) => void} fill
   */
  message (field, fill) {
    const inner = new Writer(64);
    fill(inner);
    this.tag(field, LEN);
    this.bytes(inner);
  }

  /** length-prefixed bytes of another writer */
  bytes (w) {
    this.varint(w.pos);
    this.ensure(w.pos);
    w.buf.copy(this.buf, this.pos, 0, w.pos);
    this.pos += w.pos;
  }

  /** @returns {Buffer} */
  finish () {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * @param {Writer} w
 * @param {Record<string, string>} labels
 */
function writeLabels (w, labels) {
  for (const [name, value] of Object.entries(labels)) {
    w.message(1, (l) => { l.string(1, name); l.string(2, String(value)); });
  }
}

/**
 * @param {Writer} w
 * @param {import('./collector').Sample} s a histogram sample
 */
function writeHistogram (w, s) {
  w.uint(1, s.count);
  w.double(2, s.sum);
  if (s.classic) {
    for (const b of s.classic) w.message(3, (bw) => { bw.uint(1, b.cumulative); bw.double(2, b.le); });
  }
  if (s.native) {
    const n = s.native;
    w.sint(5, n.schema);
    w.double(6, n.zeroThreshold);
    w.uint(7, n.zeroCount);
    for (const span of n.spans) w.message(12, (sw) => { sw.sint(1, span.offset); sw.uint(2, span.length); });
    if (n.deltas.length) {
      // packed repeated sint64
      const packed = new Writer(n.deltas.length * 2 + 8);
      for (const d of n.deltas) packed.varint(d >= 0 ? d * 2 : -d * 2 - 1);
      w.tag(13, LEN);
      w.bytes(packed);
    }
  }
}

/**
 * @param {Writer} w
 * @param {import('./collector').Sample} s a summary sample
 */
function writeSummary (w, s) {
  w.uint(1, s.count);
  w.double(2, s.sum);
  for (const q of s.quantiles) w.message(3, (qw) => { qw.double(1, q.quantile); qw.double(2, q.value); });
}

/**
 * Encodes metric families as the delimited protobuf exposition.
 * @param {import('./collector').Family[]} families
 * @returns {Buffer}
 */
function encodeProtobuf (families) {
  const out = new Writer(4096);
  for (const f of families) {
    const fw = new Writer(256);
    // in this format a counter family is named after its series (with _total)
    fw.string(1, f.type === 'counter' ? `${f.name}_total` : f.name);
    fw.string(2, f.help);
    fw.uint(3, TYPE[f.type]);
    for (const s of f.samples) {
      fw.message(4, (m) => {
        writeLabels(m, s.labels);
        if (f.type === 'histogram') m.message(7, (h) => writeHistogram(h, s));
        else if (f.type === 'summary') m.message(4, (sw) => writeSummary(sw, s));
        else m.message(f.type === 'counter' ? 3 : f.type === 'gauge' ? 2 : 5, (v) => v.double(1, s.value));
      });
    }
    out.bytes(fw);
  }
  return out.finish();
}

const PROTOBUF_CONTENT_TYPE = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

module.exports = { encodeProtobuf, Writer, PROTOBUF_CONTENT_TYPE };
