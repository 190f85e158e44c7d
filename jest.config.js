const jestJupyterLab = require('@jupyterlab/testing/lib/jest-config');

// Packages shipped as ES modules, which jest must transform.
const esModules = [
  '@codemirror',
  '@jupyter/',
  '@microsoft/',
  'exenv-es6',
  '@jupyterlab/',
  '@lumino/',
  'lib0',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  testRegex: 'src/.*/.*.spec.ts[x]?$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
