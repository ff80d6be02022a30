'use strict';

/**
 * `nines <command>`: each command lives in its own file and is loaded only when used, so `nines sim`
 * does not load the MQTT client and `nines probe` does not load the broker.
 */

const COMMANDS = {
  run: { file: './run', summary: 'run the gateway (no config: the demo with simulators and an embedded broker)' },
  probe: { file: './probe', summary: 'latency test in the style of the Brainboxes tests (1/2/4/8 connections, .hgrm)' },
  sweep: { file: './sweep', summary: 'offered-load sweep: achieved rate and percentiles per step, saturation point' },
  scan: { file: './scan', summary: 'commissioning: find the Modbus units on a line, identify and map them, write a starter config' },
  sim: { file: './sim', summary: 'device simulators: ED-588/ED-560 ASCII, Modbus TCP/RTU/RTU over TCP, with fault injection' },
  plot: { file: './plot', summary: 'percentile plot (SVG) of .hgrm files' },
  watch: { file: './watch', summary: 'subscribe to latency topics and show a live table merged across gateways' }
};

const USAGE = `nines: fast, predictable remote IO and honest latency percentiles

Usage: nines <command> [options]     (nines <command> --help for its options)

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(7)} ${c.summary}`).join('\n')}
`;

/**
 * @param {string[]} argv arguments after "nines"
 * @returns {Promise<number>} exit code
 */
async function main (argv) {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(require('../../package.json').version + '\n');
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    const guess = name.startsWith('-') ? undefined : require('./args').suggest(name, Object.keys(COMMANDS));
    // a typo gets its correction; anything else gets the list of commands
    process.stderr.write(guess
      ? `nines: unknown command "${name}"; did you mean "${guess}"? (nines --help lists the commands)\n`
      : `nines: unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"\n\n${USAGE}`);
    return 1;
  }
  return require(cmd.file).main(rest);
}

module.exports = { main, COMMANDS };
