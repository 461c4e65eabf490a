// The resource settings of loadConfig: defaults, durations and sizes, the derived body budget, contradictions refused, the number of workers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { availableParallelism } from 'node:os';
import { describeConfig, loadConfig } from '../../src/config/config.js';

const MiB = 1024 * 1024;

test('the defaults let four maximum uploads be in flight and limit slow clients', () => {
  const config = loadConfig([], {});
  assert.equal(config.maxBody, 64 * MiB);
  assert.equal(config.maxInFlightBody, 4 * config.maxBody);
  assert.equal(config.maxInFlight, 256);
  assert.equal(config.headersTimeout, 30_000);
  assert.equal(config.requestTimeout, 600_000);
  assert.equal(config.bodyIdleTimeout, 30_000);
});

test('durations take ms, s or min, a bare number being milliseconds; flags win over the environment', () => {
  const config = loadConfig(['--headers-timeout', '500ms', '--body-idle-timeout=15s'], { HUB_REQUEST_TIMEOUT: '2min', HUB_BODY_IDLE_TIMEOUT: '9' });
  assert.equal(config.headersTimeout, 500);
  assert.equal(config.requestTimeout, 120_000);
  assert.equal(config.bodyIdleTimeout, 15_000);
  assert.equal(loadConfig([], { HUB_BODY_IDLE_TIMEOUT: '9000' }).bodyIdleTimeout, 9000);
  assert.equal(loadConfig(['--body-idle-timeout', '0'], {}).bodyIdleTimeout, 0);
  // Without a headers limit of their own, the headers are still bounded by the request timeout.
  assert.equal(loadConfig(['--headers-timeout', '0', '--request-timeout', '1min'], {}).headersTimeout, 0);
});

test('the body budget follows a configured maximum body unless it is set itself', () => {
  assert.equal(loadConfig(['--max-body', '10m'], {}).maxInFlightBody, 40 * MiB);
  assert.equal(loadConfig(['--max-body', '10m', '--max-in-flight-body', '15m'], {}).maxInFlightBody, 15 * MiB);
  assert.equal(loadConfig(['--max-body', '0'], {}).maxInFlightBody, 0);
  assert.equal(loadConfig(['--max-in-flight', '0'], {}).maxInFlight, 0);
});

test('malformed values and contradicting limits stop the start with a message naming the setting', () => {
  assert.throws(() => loadConfig(['--request-timeout', '5 minutes'], {}), /Invalid duration "5 minutes"/);
  assert.throws(() => loadConfig(['--body-idle-timeout', '1.5s'], {}), /Invalid duration "1.5s"/);
  assert.throws(() => loadConfig(['--max-in-flight', '-1'], {}), /Invalid count "-1"/);
  assert.throws(() => loadConfig(['--max-in-flight', '2.5'], {}), /Invalid count "2.5"/);
  assert.throws(() => loadConfig(['--max-body', '10m', '--max-in-flight-body', '5m'], {}), /HUB_MAX_IN_FLIGHT_BODY must be at least HUB_MAX_BODY/);
  assert.throws(() => loadConfig(['--max-body', '0', '--max-in-flight-body', '1g'], {}), /HUB_MAX_IN_FLIGHT_BODY must be at least HUB_MAX_BODY/);
  assert.throws(() => loadConfig(['--headers-timeout', '2min', '--request-timeout', '1min'], {}), /HUB_HEADERS_TIMEOUT must not be longer than HUB_REQUEST_TIMEOUT/);
});

test('HUB_WORKERS defaults to the number of cores, takes a whole number of at least 1, and is shown at start-up', () => {
  assert.equal(loadConfig([], {}).workers, availableParallelism());
  assert.equal(loadConfig(['--workers', '1'], { HUB_WORKERS: '4' }).workers, 1);
  assert.equal(loadConfig([], { HUB_WORKERS: '3' }).workers, 3);
  for (const value of ['0', '-1', '1.5', 'all']) assert.throws(() => loadConfig(['--workers', value], {}), /Invalid number of workers/);
  assert.equal(describeConfig(loadConfig(['--workers=2'], {})).HUB_WORKERS, 2);
});
