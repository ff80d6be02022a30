'use strict';

const { decodeHistogram } = require('../latency');

/**
 * A job's summary reaches the gateway's HTTP faces (the metrics endpoint, the status page) with its
 * histograms encoded, as the worker made them once for MQTT. Each is decoded here once per summary
 * and the same decoded histograms go to every face that shows the job: the faces read them, none
 * changes them (metrics/native-histogram.js addHdr and http/window.js add them into their own).
 *
 * A summary whose histograms do not all decode is reported once and reaches no face, so that a
 * face's counts and histograms never disagree, nor the faces with one another.
 *
 * @typedef {object} DecodedHistograms
 * @property {import('../latency/paged-histogram').PagedHistogram} response
 * @property {import('../latency/paged-histogram').PagedHistogram} [service] when the summary came with them
 * @property {import('../latency/paged-histogram').PagedHistogram} [lag]
 *
 * @typedef {object} SummaryFace
 * @property {{has: (job: string) => boolean}} jobs the jobs it shows
 * @property {(job: string, payload: object, decoded: DecodedHistograms) => void} onSummary
 */

/**
 * @param {object} opts
 * @param {SummaryFace[]} opts.faces
 * @param {(job: string, err: Error) => void} opts.onError a histogram that could not be decoded
 * @param {(encoded: string) => object} [opts.decode] the decoder (latency's decodeHistogram)
 * @returns {(job: string, payload: object, hists: {service: string, lag: string}|null) => void}
 *   the listener of the gateway's 'summary' event
 */
function shareDecodedSummaries ({ faces, onError, decode = decodeHistogram }) {
  return (job, payload, hists) => {
    const to = faces.filter((f) => f.jobs.has(job));
    // a job a reload removed: none shows it, so none pays for it
    if (to.length === 0) return;
    let decoded;
    try {
      decoded = { response: decode(payload.hist) };
      if (hists) {
        decoded.service = decode(hists.service);
        decoded.lag = decode(hists.lag);
      }
    } catch (err) {
      onError(job, err);
      return;
    }
    for (const f of to) f.onSummary(job, payload, decoded);
  };
}

module.exports = { shareDecodedSummaries };
