// Bundles the hub (tsc's output, dist/src/main.js) into dist/bundle/: the entry module and one chunk per part loaded on
// demand (the CLI's import/export, the file formats). Node then reads a few files at start instead of about 900 modules
// resolved and compiled one by one: the hub starts on half the CPU and an account or token command on a third
// (docs/decisions.md, "Start-up").
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunks are named by their content's hash: a rebuild would leave the last build's beside the new ones.
rmSync('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: ['dist/src/main.js'],
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Left to Node's own loading: better-sqlite3 loads its compiled add-on and @bokuweb/zstd-wasm (GeoParquet's zstd) its
  // .wasm from their own folders (`__dirname`, which a bundled ES module has not); the bench's probe
  // (bench/hub-probe.ts, `node --import`) wraps the two database drivers' calls, so they must be the modules it
  // imports, which pg then is; pg-protocol, so that the hub changes the reader pg uses (large-ascii-texts.ts);
  // pg-native is an optional peer of pg that is not installed. The other packages' uses of `__dirname` are in code
  // the hub does not run (pino's transport workers, emscripten's guarded browser paths).
  external: ['better-sqlite3', 'pg', 'pg-protocol', '@bokuweb/zstd-wasm', 'pg-native'],
  // CommonJS packages in the bundle call require() for Node's modules; an ES module has none of its own.
  banner: { js: "import { createRequire as __hubCreateRequire } from 'node:module'; const require = __hubCreateRequire(import.meta.url);" },
  sourcemap: true,
  logLevel: 'warning',
});
