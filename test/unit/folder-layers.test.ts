// The layout's import rules (README "Layout"): each top-level folder of src/ imports only folders of lower layers.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The TypeScript sources: the tests run from dist/test/unit, the sources sit at the repository's root. */
const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
const RELATIVE_IMPORT = /from '(\.{1,2}\/[^']+)'/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The top-level folder of src/ a path lies in, or '' for the files at src/'s root (main.ts, serve.ts). */
function topFolder(path: string): string {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0] : '';
}

/** Every import from one top-level folder into another, as `from -> to` with the importing file. */
function crossFolderImports(): Array<{ from: string; to: string; file: string }> {
  return sourceFiles(SRC).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)].flatMap((match) => {
    const from = topFolder(file);
    const to = topFolder(resolve(dirname(file), match[1]));
    return from !== to && from !== '' && to !== '' ? [{ from, to, file: relative(SRC, file) }] : [];
  }));
}

/**
 * The layers from the bottom up; a folder imports only folders of lower layers (two folders of one layer not each
 * other). types/ holds declarations of untyped packages and is imported by nobody.
 */
const LAYERS: ReadonlyArray<readonly string[]> = [['geo'], ['core'], ['storage', 'transfer'], ['hub'], ['http'], ['config'], ['cluster', 'cli']];
const layerOf = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));

test('every top-level folder of src/ is in a layer', () => {
  const folders = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory() && entry.name !== 'types');
  assert.deepEqual(folders.map((entry) => entry.name).filter((name) => layerOf(name) < 0), []);
});

test('no folder imports one of its own or a higher layer', () => {
  const upward = crossFolderImports().filter((edge) => layerOf(edge.to) >= layerOf(edge.from));
  assert.deepEqual(upward.map((edge) => `${edge.file}: ${edge.from} -> ${edge.to}`), []);
});
