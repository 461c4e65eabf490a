// Unit tests for the query deadline setting: HUB_QUERY_TIMEOUT / --query-timeout, its units and its default.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';

const timeout = (argv: string[], env: NodeJS.ProcessEnv = {}) => loadConfig(argv, env).queryTimeout;

describe('query timeout setting', () => {
  test('defaults to 60 seconds', () => {
    assert.equal(timeout([]), 60_000);
  });

  test('takes milliseconds, seconds and minutes as PostgreSQL settings do', () => {
    assert.equal(timeout(['--query-timeout', '250']), 250);
    assert.equal(timeout(['--query-timeout=500ms']), 500);
    assert.equal(timeout(['--query-timeout', '30s']), 30_000);
    assert.equal(timeout(['--query-timeout', '2min']), 120_000);
    assert.equal(timeout(['--query-timeout', '1h']), 3_600_000);
    assert.equal(timeout([], { HUB_QUERY_TIMEOUT: '45s' }), 45_000);
  });

  test('0 turns the deadline off', () => {
    assert.equal(timeout(['--query-timeout', '0']), 0);
  });

  test('the flag wins over the environment', () => {
    assert.equal(timeout(['--query-timeout', '5s'], { HUB_QUERY_TIMEOUT: '45s' }), 5_000);
  });

  test('refuses what is not a whole duration', () => {
    for (const value of ['', 'soon', '1.5s', '-1s', '10y', '30 seconds']) {
      assert.throws(() => timeout(['--query-timeout', value]), /Invalid duration|Missing value/, value);
    }
  });
});
