// Runs the grammar over every example workflow and test of the repository (examples/**/*.fsc.hcl
// and *.fsctest.hcl) and over the workflows of the language reference (the ```hcl blocks of
// docs/reference/language.md), with vscode-textmate, the tokenizer VS Code uses. Each file must
//
//   - have no token scoped invalid.*;
//   - end with the tokenizer back at the top level: a construct the grammar opened and never
//     closed (a block, a string, a heredoc) would colour the rest of the file wrongly;
//   - agree, token by token, with a small independent reading of HCL below (lexHCL): the same
//     block types, labels, attribute names, object keys, comments, strings, templates,
//     heredocs, numbers, literals, function calls, references and brackets.
//
// test/grammar/ holds the hand-written cases, one construct at a time (vscode-tmgrammar-test);
// this file checks that the grammar reads whole, real files the way the language does.
//
//   node test/examples.mjs               check every file
//   node test/examples.mjs --dump FILE   print FILE's tokens and their scopes

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..');
const repoRoot = path.resolve(extDir, '../..');

const grammarFiles = {
  'source.fuscia': path.join(extDir, 'syntaxes/fuscia.tmLanguage.json'),
  'source.fuscia-test': path.join(extDir, 'syntaxes/fuscia-test.tmLanguage.json'),
};

async function loadRegistry() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  return new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      const file = grammarFiles[scopeName];
      if (!file) {
        return null;
      }
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
}

// tokenize returns the tokens of each line of text and whether the tokenizer ended at the top
// level (its rule stack as deep as at the start).
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const tokens = lines.map((line) => {
    const r = grammar.tokenizeLine(line, stack);
    stack = r.ruleStack;
    return r.tokens;
  });
  return { lines, tokens, closed: stack.depth === vsctm.INITIAL.depth };
}

// ---- An independent reading of HCL native syntax, for the checks. ----

const blockTypes = new Set([
  'workflow', 'variable', 'secret', 'trigger', 'task', 'switch', 'join', 'loop', 'wait', 'call',
  'output', 'component', 'plugin', 'locals',
  'retry', 'data', 'auth', 'hmac_sha256', 'case', 'default', 'approval', 'callback',
  'run', 'mock', 'mock_component', 'mock_plugin', 'mock_http', 'assert', 'attempt', 'variables',
]);
const referenceRoots = new Set([
  'var', 'secret', 'local', 'trigger', 'each', 'event', 'task', 'switch', 'join', 'loop', 'wait',
  'call', 'builtin', 'component', 'plugin', 'node', 'output', 'input', 'attempt', 'payload',
]);
const directiveWords = new Set(['if', 'else', 'endif', 'for', 'in', 'endfor']);

const idRe = /[A-Za-z_][\w-]*/y;
const blockRe = /([A-Za-z_][\w-]*)((?:[ \t]+(?:"(?:[^"\\\n]|\\.)*"|[A-Za-z_][\w-]*))*)[ \t]*\{/y;
const labelRe = /"(?:[^"\\\n]|\\.)*"|[A-Za-z_][\w-]*/g;
const attrRe = /([A-Za-z_][\w-]*)[ \t]*=(?![=>])/y;
const heredocRe = /<<-?([A-Za-z_][\w-]*)[ \t]*(?=\n|$)/y;
const numberRe = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const operatorRe = /==|!=|<=|>=|&&|\|\||=>|[-+*/%<>!?:=]/y;

function at(re, s, i) {
  re.lastIndex = i;
  return re.exec(s);
}

// lexHCL returns what the grammar must say about text: [{index, scope}], each meaning "the
// token at this offset has a scope that is `scope` or starts with `scope.`". It throws on
// brackets that do not match, which the grammar could not be blamed for.
function lexHCL(s) {
  const want = [];
  const expect = (index, scope) => want.push({ index, scope });
  const stack = [{ k: 'body', block: false, attr: false }];
  const top = () => stack[stack.length - 1];
  const lineEnd = (i) => {
    const j = s.indexOf('\n', i);
    return j < 0 ? s.length : j;
  };
  let afterDot = false;
  let i = 0;
  while (i < s.length) {
    const c = top();
    const ch = s[i];

    if (c.k === 'string') {
      if (ch === '"') {
        stack.pop();
        i++;
      } else if (ch === '\n') {
        stack.pop();
      } else if (ch === '\\') {
        expect(i, 'constant.character.escape');
        i += 2;
      } else {
        i = template(c, i);
      }
      continue;
    }

    if (c.k === 'heredoc') {
      if (c.bol) {
        c.bol = false;
        const end = lineEnd(i);
        const line = s.slice(i, end);
        const m = /^([ \t]*)(\S+)[ \t]*$/.exec(line);
        if (m && m[2] === c.marker) {
          expect(i + m[1].length, 'keyword.control.heredoc');
          stack.pop();
          i = end;
          continue;
        }
        const first = line.search(/\S/);
        if (first >= 0 && !/^[$%]\{/.test(line.slice(first))) {
          expect(i + first, 'string.unquoted.heredoc');
        }
      }
      if (ch === '\n') {
        c.bol = true;
        i++;
      } else {
        i = template(c, i);
      }
      continue;
    }

    if (c.k === 'body' && !c.attr) {
      let end;
      if (/\s/.test(ch)) {
        i++;
      } else if ((end = comment(i))) {
        i = end;
      } else if (ch === '}' && c.block) {
        expect(i, 'punctuation.section.block.end');
        stack.pop();
        i++;
      } else if (at(blockRe, s, i)) {
        const m = at(blockRe, s, i);
        expect(i, blockTypes.has(m[1]) ? 'storage.type.block' : 'entity.name.type.block');
        const labelsAt = i + m[1].length;
        for (const l of m[2].matchAll(labelRe)) {
          expect(labelsAt + l.index, 'entity.name.label');
        }
        expect(i + m[0].length - 1, 'punctuation.section.block.begin');
        stack.push({ k: 'body', block: true, attr: false });
        i += m[0].length;
      } else if (at(attrRe, s, i)) {
        const m = at(attrRe, s, i);
        expect(i, 'entity.other.attribute-name');
        c.attr = true;
        i += m[0].length;
      } else {
        c.attr = true; // not HCL; read it as an expression to the line's end
      }
      continue;
    }

    // An expression: an attribute's value, or inside brackets or a template.
    if (c.k === 'body') {
      if (ch === '\n' || ch === '}') {
        c.attr = false;
        if (ch === '\n') {
          i++;
        }
        continue;
      }
    }
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
      continue;
    }
    if (ch === '\n') {
      if (c.k === 'object') {
        c.item = true;
      }
      i++;
      continue;
    }
    const wasDot = afterDot;
    afterDot = false;
    const itemStart = c.k === 'object' && c.item;
    if (c.k === 'object') {
      c.item = false;
    }
    let m;
    if ((m = comment(i))) {
      i = m;
      if (c.k === 'object') {
        c.item = true;
      }
    } else if (ch === '"') {
      expect(i, 'string.quoted.double');
      expect(i, 'punctuation.definition.string.begin');
      stack.push({ k: 'string' });
      i++;
    } else if ((m = at(heredocRe, s, i))) {
      expect(i, 'keyword.operator.heredoc');
      expect(i + m[0].indexOf(m[1]), 'keyword.control.heredoc');
      stack.push({ k: 'heredoc', marker: m[1], bol: true });
      i = lineEnd(i) + 1;
    } else if (ch === '{') {
      expect(i, 'punctuation.section.braces.begin');
      stack.push({ k: 'object', item: true });
      i++;
    } else if (ch === '[') {
      m = /\[\s*\*\s*\]/y;
      m.lastIndex = i;
      const splat = m.exec(s);
      if (splat) {
        expect(i, 'keyword.operator.splat');
        i += splat[0].length;
      } else {
        expect(i, 'punctuation.section.brackets.begin');
        stack.push({ k: 'tuple' });
        i++;
      }
    } else if (ch === '(') {
      expect(i, 'punctuation.section.parens.begin');
      stack.push({ k: 'parens' });
      i++;
    } else if (ch === '}' || ch === ']' || ch === ')') {
      const closes = { interp: '}', directive: '}', object: '}', tuple: ']', parens: ')', call: ')' };
      if (closes[c.k] !== ch) {
        throw new Error(`offset ${i}: ${ch} closes ${c.k}`);
      }
      const scope = {
        interp: 'punctuation.definition.template-expression.end',
        directive: 'punctuation.definition.template-expression.end',
        object: 'punctuation.section.braces.end',
        tuple: 'punctuation.section.brackets.end',
        parens: 'punctuation.section.parens.end',
        call: 'punctuation.section.arguments.end',
      }[c.k];
      expect(i, scope);
      stack.pop();
      i++;
    } else if (ch === ',') {
      expect(i, 'punctuation.separator.comma');
      if (c.k === 'object') {
        c.item = true;
      }
      i++;
    } else if (ch === '.') {
      if (s.startsWith('...', i)) {
        expect(i, 'keyword.operator.expand');
        i += 3;
      } else {
        expect(i, 'punctuation.accessor');
        afterDot = true;
        i++;
      }
    } else if (ch === '*' && wasDot) {
      expect(i, 'keyword.operator.splat');
      i++;
    } else if ((m = at(numberRe, s, i))) {
      expect(i, 'constant.numeric');
      i += m[0].length;
    } else if ((m = at(idRe, s, i))) {
      const word = m[0];
      const rest = s.slice(i + word.length, lineEnd(i));
      if (itemStart && /^\s*(?:=(?![=>])|:)/.test(rest)) {
        expect(i, 'variable.other.property');
      } else if (wasDot) {
        expect(i, 'variable.other.member');
      } else if (c.k === 'directive' && directiveWords.has(word)) {
        expect(i, 'keyword.control.directive');
      } else if (word === 'true' || word === 'false') {
        expect(i, 'constant.language.boolean');
      } else if (word === 'null') {
        expect(i, 'constant.language.null');
      } else if (word === 'for' || word === 'in' || word === 'if') {
        expect(i, 'keyword.control');
      } else if (/^\s*\(/.test(rest)) {
        expect(i, 'support.function');
        const paren = i + word.length + rest.indexOf('(');
        expect(paren, 'punctuation.section.arguments.begin');
        stack.push({ k: 'call' });
        i = paren + 1;
        continue;
      } else if (referenceRoots.has(word) && /^\s*[.[]/.test(rest)) {
        expect(i, 'variable.language');
      } else {
        expect(i, 'variable.other.readwrite');
      }
      i += word.length;
    } else if ((m = at(operatorRe, s, i))) {
      expect(i, 'keyword.operator');
      i += m[0].length;
    } else {
      i++; // ~ of a template marker, or a character HCL does not have
    }
  }
  if (stack.length !== 1) {
    throw new Error(`the file ends inside ${top().k}`);
  }
  return want;

  // comment returns the offset after the comment at i, or 0 when there is none.
  function comment(i) {
    if (s[i] === '#' || s.startsWith('//', i)) {
      expect(i, 'comment.line');
      return lineEnd(i);
    }
    if (s.startsWith('/*', i)) {
      expect(i, 'comment.block');
      const end = s.indexOf('*/', i + 2);
      return end < 0 ? s.length : end + 2;
    }
    return 0;
  }

  // template reads one step of a string's or heredoc's text at i and returns the next offset.
  function template(c, i) {
    if (s.startsWith('$${', i) || s.startsWith('%%{', i)) {
      expect(i, 'constant.character.escape');
      return i + 3;
    }
    if (s.startsWith('${', i) || s.startsWith('%{', i)) {
      expect(i, 'punctuation.definition.template-expression.begin');
      stack.push({ k: s[i] === '$' ? 'interp' : 'directive' });
      return i + 2;
    }
    return i + 1;
  }
}

// ---- The files. ----

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !e.name.startsWith('.')) {
        walk(p, out);
      }
    } else if (/\.(fsc|fsctest)\.hcl$/.test(e.name)) {
      out.push(p);
    }
  }
  return out;
}

// sources are the texts to check: {name, text, scope, firstLine}, firstLine being the line of
// the file the text starts on (1 for a whole file, the fence's next line for a docs block).
function sources() {
  const out = walk(path.join(repoRoot, 'examples'), []).sort().map((file) => ({
    name: path.relative(repoRoot, file),
    text: fs.readFileSync(file, 'utf8'),
    scope: file.endsWith('.fsctest.hcl') ? 'source.fuscia-test' : 'source.fuscia',
    firstLine: 1,
  }));
  const ref = 'docs/reference/language.md';
  const lines = fs.readFileSync(path.join(repoRoot, ref), 'utf8').split('\n');
  for (let n = 0; n < lines.length; n++) {
    if (lines[n].trim() !== '```hcl') {
      continue;
    }
    const start = n + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') {
      end++;
    }
    out.push({ name: ref, text: lines.slice(start, end).join('\n') + '\n', scope: 'source.fuscia', firstLine: start + 1 });
    n = end;
  }
  return out;
}

function check(grammar, src) {
  const { lines, tokens, closed } = tokenize(grammar, src.text);
  const problems = [];
  const where = (line, col) => `${src.name}:${src.firstLine + line}:${col + 1}`;
  const scopesAt = (line, col) => {
    const t = tokens[line].find((t) => t.startIndex <= col && col < t.endIndex);
    return t ? t.scopes : [];
  };
  tokens.forEach((ts, line) => {
    for (const t of ts) {
      const bad = t.scopes.find((sc) => sc.startsWith('invalid'));
      if (bad) {
        problems.push(`${where(line, t.startIndex)}: ${bad}: ${JSON.stringify(lines[line].slice(t.startIndex, t.endIndex))}`);
      }
    }
  });
  if (!closed) {
    problems.push(`${src.name}: the grammar does not return to the top level at the end of the text starting on line ${src.firstLine}`);
  }
  let want;
  try {
    want = lexHCL(lines.join('\n'));
  } catch (err) {
    problems.push(`${src.name} (from line ${src.firstLine}): not read as HCL: ${err.message}`);
    want = [];
  }
  const lineStarts = [0];
  for (const l of lines) {
    lineStarts.push(lineStarts[lineStarts.length - 1] + l.length + 1);
  }
  for (const w of want) {
    let line = 0;
    while (lineStarts[line + 1] <= w.index) {
      line++;
    }
    const col = w.index - lineStarts[line];
    const have = scopesAt(line, col);
    if (!have.some((sc) => sc === w.scope || sc.startsWith(w.scope + '.'))) {
      const text = lines[line].slice(col, col + 24);
      problems.push(`${where(line, col)}: want ${w.scope} at ${JSON.stringify(text)}, have ${have.join(' ')}`);
    }
  }
  return { problems, checked: want.length };
}

async function main() {
  const registry = await loadRegistry();
  const args = process.argv.slice(2);
  if (args[0] === '--dump') {
    for (const file of args.slice(1)) {
      const scope = file.endsWith('.fsctest.hcl') ? 'source.fuscia-test' : 'source.fuscia';
      const grammar = await registry.loadGrammar(scope);
      const { lines, tokens } = tokenize(grammar, fs.readFileSync(file, 'utf8'));
      tokens.forEach((ts, n) => {
        console.log(`${n + 1}: ${lines[n]}`);
        for (const t of ts) {
          console.log(`    ${JSON.stringify(lines[n].slice(t.startIndex, t.endIndex))} ${t.scopes.join(' ')}`);
        }
      });
    }
    return;
  }
  const all = sources();
  const files = new Set(all.map((s) => s.name));
  // A walk that found nothing would pass whatever the grammar does.
  if (files.size < 10 || all.length < 20) {
    throw new Error(`found only ${files.size} files and ${all.length} texts under ${repoRoot}; the search is broken`);
  }
  let failed = 0;
  let checked = 0;
  for (const src of all) {
    const grammar = await registry.loadGrammar(src.scope);
    const r = check(grammar, src);
    checked += r.checked;
    if (r.problems.length > 0) {
      failed++;
      for (const p of r.problems.slice(0, 20)) {
        console.error(p);
      }
      if (r.problems.length > 20) {
        console.error(`${src.name}: … and ${r.problems.length - 20} more`);
      }
    }
  }
  if (failed > 0) {
    console.error(`grammar: ${failed} of ${all.length} texts do not tokenize as HCL reads them`);
    process.exit(1);
  }
  console.log(`grammar: ${all.length} texts from ${files.size} files tokenize as HCL reads them (${checked} tokens checked)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
