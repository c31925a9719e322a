import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { serverCommand } from '../server';

const root = path.resolve('/work/project');
const home = path.resolve('/home/ada');

test('defaults run fuscia lsp from PATH with no flags', () => {
  assert.deepEqual(serverCommand({ path: 'fuscia', pluginDirs: [], home: '' }, root, home), {
    command: 'fuscia',
    args: ['lsp'],
  });
});

test('an empty path falls back to fuscia', () => {
  assert.equal(serverCommand({ path: '  ', pluginDirs: [], home: '' }, root, home).command, 'fuscia');
});

test('plugin directories become repeated -plugin-dir flags, in order, then -home', () => {
  const got = serverCommand(
    { path: 'fuscia', pluginDirs: ['bin/plugins', '/opt/fuscia/plugins', ' '], home: '~/.fuscia-dev' },
    root,
    home,
  );
  assert.deepEqual(got.args, [
    'lsp',
    '-plugin-dir', path.join(root, 'bin/plugins'),
    '-plugin-dir', path.resolve('/opt/fuscia/plugins'),
    '-home', path.join(home, '.fuscia-dev'),
  ]);
});

test('a path with a slash is resolved; a bare name is left for PATH', () => {
  assert.equal(serverCommand({ path: './bin/fuscia', pluginDirs: [], home: '' }, root, home).command, path.join(root, 'bin/fuscia'));
  assert.equal(serverCommand({ path: '~/go/bin/fuscia', pluginDirs: [], home: '' }, root, home).command, path.join(home, 'go/bin/fuscia'));
  assert.equal(serverCommand({ path: 'fuscia-dev', pluginDirs: [], home: '' }, root, home).command, 'fuscia-dev');
});

test('without a workspace folder relative directories are passed as written', () => {
  assert.deepEqual(serverCommand({ path: 'fuscia', pluginDirs: ['plugins'], home: 'h' }, undefined, home).args, [
    'lsp', '-plugin-dir', 'plugins', '-home', 'h',
  ]);
});
