// npm test: starts ONE PostgreSQL cluster for the whole run, runs `node --test` over the test files against it, and removes it.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKENDS } from './helpers/backends.js';
import { type PostgresCluster, startPostgresCluster, TEMPLATE_URL_ENV } from './helpers/postgres-cluster.js';

/** Test files are `*.test.js` under dist/test; the helpers (and this script) are not. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.js'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * The files in the order they start: the slowest first by test/file-durations.json, files it does not know before
 * them. node --test starts files in the order given as lanes free up, so a slow file started last would run on alone
 * at the end of the run while the other lane idles (docs/decisions.md, "The test suite's wall time").
 */
function slowestFirst(files: string[], testDir: string): string[] {
  const known = JSON.parse(readFileSync(join(testDir, '../../test/file-durations.json'), 'utf8')) as Record<string, number>;
  const seconds = (file: string) => known[relative(testDir, file)] ?? Infinity;
  return [...files].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
}

/**
 * HUB_TEST_DURATIONS_OUT=<file>: the TAP output as always, and each file's seconds written to <file> as JSON, the
 * content test/file-durations.json takes.
 */
function reporterArgs(testDir: string): string[] {
  const out = process.env.HUB_TEST_DURATIONS_OUT;
  if (!out) return [];
  return ['--test-reporter=tap', '--test-reporter-destination=stdout',
    `--test-reporter=${join(testDir, 'helpers/durations-reporter.js')}`, `--test-reporter-destination=${out}`];
}

async function main(): Promise<number> {
  const testDir = fileURLToPath(new URL('.', import.meta.url));
  // The selection (and its one "postgres backend skipped" line) is made here once; the test files get its result.
  const env: NodeJS.ProcessEnv = { ...process.env, HUB_TEST_BACKENDS: BACKENDS.join(',') };
  let cluster: PostgresCluster | undefined;
  if (BACKENDS.includes('postgres')) {
    // Its database `hub` already has PostGIS: every test database is a copy of it.
    cluster = await startPostgresCluster();
    env[TEMPLATE_URL_ENV] = cluster.url;
  }
  try {
    // Files named on the command line (`npm test -- dist/test/http/x.test.js`) run instead of all of them.
    const named = process.argv.slice(2);
    const files = named.length > 0 ? named : slowestFirst(testFiles(testDir), testDir).map((file) => relative(process.cwd(), file));
    // Inherited stdio: CI reads the runner's summary lines as node prints them.
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...reporterArgs(testDir), ...files], { stdio: 'inherit', env });
    // Ctrl-C reaches the whole process group; a SIGTERM sent to this script alone is passed on.
    const forward = (signal: NodeJS.Signals) => { child.kill(signal); };
    process.prependListener('SIGTERM', forward);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    process.removeListener('SIGTERM', forward);
    return code ?? 128 + (signal ? constants.signals[signal] : 0);
  } finally {
    await cluster?.destroy();
  }
}

// `node --test dist/test/` would load this script as a test file: it must not start a second run then.
if (process.env.NODE_TEST_CONTEXT === undefined) {
  main().then((code) => { process.exitCode = code; }, (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
