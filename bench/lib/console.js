'use strict';

/** Prints each question's tables to the terminal as it finishes (the same tables as the results file). */

const { latencyTable, customTable, sectionRefs } = require('./report');

/**
 * @param {object} q a question's result
 * @param {object[]} results all results so far (for the floor and C-client ratios)
 */
function printQuestion (q, results) {
  if (q.error) { console.log(`\nQ${q.question} ${q.name}: FAILED — ${q.error}`); return; }
  console.log(`\nQ${q.question}. ${q.title}`);
  for (const s of q.sections) {
    console.log(`  ${s.title}`);
    const lines = s.kind === 'latency' ? latencyTable(s, sectionRefs(results, s)) : customTable(s);
    for (const l of lines) if (!/^\| ---/.test(l)) console.log('  ' + l);
  }
}

module.exports = { printQuestion };
