'use strict';

const js = require('@eslint/js');
const n = require('eslint-plugin-n');
const globals = require('globals');

module.exports = [
  { ignores: ['node_modules/**', 'out/**', 'bench/node_modules/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    plugins: { n },
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'commonjs',
      globals: { ...globals.node }
    },
    rules: {
      'n/prefer-node-protocol': 'error',
      'n/no-process-exit': 'error',
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }]
    }
  },
  {
    files: ['bin/**/*.js', 'gateway/cli/**/*.js'],
    rules: { 'n/no-process-exit': 'off' }
  },
  {
    files: ['test/**/*.js', 'bench/**/*.js'],
    languageOptions: { globals: { ...globals.node, ...globals.mocha } }
  },
  {
    files: ['gateway/runtime/http/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser } }
  },
  {
    // the editor's shared code, served to the browser as a plain script
    files: ['resources/**/*.js'],
    languageOptions: { ecmaVersion: 5, sourceType: 'script', globals: { ...globals.browser, RED: 'readonly', $: 'readonly' } }
  },
  {
    files: ['nodes/**/*.html.js', 'test/editor/**/*.js'],
    languageOptions: { globals: { ...globals.browser, RED: 'readonly', $: 'readonly' } }
  }
];
