// npm test: starts ONE PostgreSQL cluster for the whole run, runs `node --test` over the test files against it, and removes it.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
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
    const files = named.length > 0 ? named : testFiles(testDir).map((file) => relative(process.cwd(), file));
    // Inherited stdio: CI reads the runner's summary lines as node prints them.
    const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit', env });
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
