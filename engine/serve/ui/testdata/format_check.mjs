// Checks of the text helpers (assets/format.js), run by layout_test.go with node. Exits 1 with
// a message naming the case.
import { visibleControls, plural } from '../assets/format.js';

let failed = 0;
function same(name, got, want) {
  if (got !== want) { failed++; console.error(`${name}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`); }
}

// A log line's control characters are shown, not obeyed; tabs, new lines and other text stay.
same('ansi', visibleControls('\x1b[31mred\x1b[0m'), '\\x1b[31mred\\x1b[0m');
same('bell and cr', visibleControls('a\x07b\rc'), 'a\\x07b\\x0dc');
same('del', visibleControls('x\x7f'), 'x\\x7f');
same('tab and newline', visibleControls('a\tb\nc'), 'a\tb\nc');
same('unicode', visibleControls('ünïcode ✓'), 'ünïcode ✓');
same('not a string', visibleControls(42), '42');
same('one node', plural(1, 'node'), '1 node');
same('nodes', plural(3, 'node'), '3 nodes');
same('no nodes', plural(0, 'node'), '0 nodes');

if (failed) process.exit(1);
