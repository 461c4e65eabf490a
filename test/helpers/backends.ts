// Which storage engines the black-box tests run against (HUB_TEST_BACKENDS), and the notice when PostgreSQL is missing.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresUnavailable } from './postgres-cluster.js';

export type Backend = 'sqlite' | 'postgres';
const KNOWN_BACKENDS: readonly Backend[] = ['sqlite', 'postgres'];

/** Prints a line once per test run: every test file is a process of its own, started by the same runner. */
function announceOnce(line: string): void {
  try {
    writeFileSync(join(tmpdir(), `hub-test-notice-${process.ppid}`), line, { flag: 'wx' });
  } catch {
    return;
  }
  process.stderr.write(`${line}\n`);
}

/**
 * The storage engines the suite runs against (env HUB_TEST_BACKENDS, a comma list); each test file runs
 * its cases once per engine. Without PostgreSQL or PostGIS the postgres backend is left out with one
 * line saying so, except in CI, where both engines must run.
 */
function selectBackends(): readonly Backend[] {
  const requested = (process.env.HUB_TEST_BACKENDS ?? 'sqlite,postgres').split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = requested.filter((name) => !(KNOWN_BACKENDS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`HUB_TEST_BACKENDS names unknown backends ${unknown.join(', ')}; known: ${KNOWN_BACKENDS.join(', ')}`);
  const backends = requested as Backend[];
  if (!backends.includes('postgres')) return backends;
  const missing = postgresUnavailable();
  if (missing === undefined) return backends;
  if (process.env.CI) throw new Error(`The postgres backend must run in CI, but ${missing}`);
  announceOnce(`postgres backend skipped: ${missing}`);
  return backends.filter((backend) => backend !== 'postgres');
}

export const BACKENDS = selectBackends();
