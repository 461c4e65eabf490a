// The layout's import rules (README "Layout"): geo/ imports no other folder, and no two top-level folders of src/ import each other.
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

test('geo/ imports no other folder', () => {
  const imports = crossFolderImports().filter((edge) => edge.from === 'geo');
  assert.deepEqual(imports, []);
});

test('no two top-level folders of src/ import each other', () => {
  const edges = crossFolderImports();
  const both = edges.filter((edge) => edges.some((other) => other.from === edge.to && other.to === edge.from));
  assert.deepEqual(both.map((edge) => `${edge.file}: ${edge.from} -> ${edge.to}`), []);
});
